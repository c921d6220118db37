package tunetest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestKernelBedJournaled: New journals the bed's namespaces under its
// run ID before it makes them, as a run does, so that a test killed by
// go test's timeout leaves them to plain `cnibench cleanup`; when the
// test ends they are removed and the journal closes clean. Before, New
// journaled nothing, and only --orphans removed a killed test's bed.
// Journaled in the test's own directory here, not /run/cnibench.
func TestKernelBedJournaled(t *testing.T) {
	RequireKernel(t)
	dir := t.TempDir()
	orig := bedJournalDir
	bedJournalDir = dir
	t.Cleanup(func() { bedJournalDir = orig })
	id := NewID()
	path := filepath.Join(dir, id+journal.Ext)
	t.Run("bed", func(t *testing.T) {
		b := New(t, id)
		r, err := journal.ReadReplay(path)
		if err != nil {
			t.Fatalf("the bed's journal: %v", err)
		}
		var got []string
		for _, e := range r.Pending() {
			if e.Object != nil && e.Object.Kind == journal.KindNetns {
				got = append(got, e.Object.Name)
			}
		}
		if want := []string{b.Node, b.Pod}; !slices.Equal(got, want) {
			t.Errorf("journaled namespaces %v, want %v", got, want)
		}
	})
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bed's journal is left after the test: %v", err)
	}
	if leaks := Leaks(); len(leaks) > 0 {
		t.Errorf("the bed is left: %v", leaks)
	}
}
