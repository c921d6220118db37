package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockErrorNeedsRoot: a directory that cannot be opened gives a
// *LockError saying the lock is root's (the CLI's bad-input exit 2).
func TestLockErrorNeedsRoot(t *testing.T) {
	e := &LockError{Dir: "/run/cnibench", Err: &os.PathError{Op: "open", Path: "/run/cnibench", Err: os.ErrPermission}}
	if !errors.Is(e, os.ErrPermission) || !strings.Contains(e.Error(), "root") {
		t.Fatalf("LockError = %v", e)
	}
	dir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(dir, nil, 0o600)
	var le *LockError
	if _, err := LockDir(dir); !errors.As(err, &le) {
		t.Fatalf("LockDir over a file = %v, want LockError", err)
	}
}
