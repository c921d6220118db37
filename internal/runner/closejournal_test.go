package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestClosingKeepsThePendingError: a run that failed (or was stopped)
// and could not undo everything still reports the kept journal; before,
// Close's *journal.PendingError was dropped whenever the run had failed,
// and the command exited as if all was undone.
func TestClosingKeepsThePendingError(t *testing.T) {
	j, err := journal.Open(t.TempDir(), "kept", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.RecordSet(journal.Set{FS: journal.FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"}); err != nil {
		t.Fatal(err)
	}
	stopped := context.Canceled
	err = closeJournal(j, stopped)
	var pe *journal.PendingError
	if !errors.Is(err, stopped) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "run cnibench cleanup") {
		t.Fatalf("closeJournal = %v; want the run's error and the kept journal", err)
	}
}
