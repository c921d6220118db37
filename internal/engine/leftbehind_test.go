package engine

import (
	"errors"
	"fmt"
	"testing"
)

// An error marked LeftBehind keeps its message and what it wraps, and
// says ErrLeftBehind through a join and a wrapping; nil stays nil, so a
// teardown that succeeded marks nothing.
func TestLeftBehind(t *testing.T) {
	if LeftBehind(nil) != nil {
		t.Fatal("LeftBehind(nil) is not nil")
	}
	gone := errors.New("delete netns cnb-1-node-server: device busy")
	err := fmt.Errorf("build cluster for bridge: %w", errors.Join(errors.New("connect nodes: EEXIST"), LeftBehind(gone)))
	if !errors.Is(err, ErrLeftBehind) || !errors.Is(err, gone) {
		t.Errorf("%v: Is ErrLeftBehind %v, Is its cause %v; want both", err, errors.Is(err, ErrLeftBehind), errors.Is(err, gone))
	}
	if LeftBehind(gone).Error() != gone.Error() {
		t.Errorf("message %q, want %q", LeftBehind(gone).Error(), gone.Error())
	}
	if errors.Is(errors.New("connect nodes: EEXIST"), ErrLeftBehind) {
		t.Error("an unmarked error is ErrLeftBehind")
	}
}
