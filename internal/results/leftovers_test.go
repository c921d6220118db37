package results

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A kill during WriteFileAtomic leaves its temporary file (".env.json.tmp"
// and CreateTemp's digits) in the run directory; the resume that reopens
// the directory removes such files, and nothing else.
func TestReopenRemovesTempLeftovers(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	left := []string{".env.json.tmp123456", ".stops.json.tmp9", ".summary.csv.tmp42"}
	kept := []string{".env.json.tmpx", "notes.tmp1", ".tmp1", "env.tmp", "keep.txt"}
	for _, n := range append(slices.Clone(left), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err = Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s left in the run directory (%v)", n, err)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed: %v", n, err)
		}
	}
}
