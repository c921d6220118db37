package runner

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// useTempDir fails to create the directory (TMPDIR missing, or the name
// taken): the journal entry is closed, so the journal goes away with the
// run and the next run is not refused for a change this one never made.
func TestTempDirFailureClosesItsEntry(t *testing.T) {
	jdir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	j, err := journal.Open(jdir, "abc123", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	r := &run{id: "abc123", journal: j}
	if _, err := r.useTempDir(); err == nil {
		t.Fatal("want an error")
	}
	err = j.Close()
	var pe *journal.PendingError
	if errors.As(err, &pe) {
		t.Errorf("journal kept after a failed start that changed nothing: %v", err)
	}
	if _, err := journal.BeginRun(jdir, ""); err != nil {
		t.Errorf("next run refused: %v", err)
	}
}
