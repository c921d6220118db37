package runner

import (
	"context"
	"errors"
	"fmt"
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

// A kept journal names the cleanup that replays it: --journal-dir for a
// directory other than the default, the caller's for a kube run.
func TestKeptJournalNamesItsCleanup(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ given, jdir, want string }{
		{"", journal.DefaultDir, "cnibench cleanup"},
		{"", dir, "cnibench cleanup --journal-dir " + dir},
		{"cnibench cleanup --kube --context c", dir, "cnibench cleanup --kube --context c"},
	} {
		if got := journalCleanup(c.given, c.jdir); got != c.want {
			t.Errorf("journalCleanup(%q, %q) = %q, want %q", c.given, c.jdir, got, c.want)
		}
	}
	j, err := journal.Open(dir, "kept2", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	j.SetCleanup(journalCleanup("", dir))
	if _, err := j.RecordSet(journal.Set{FS: journal.FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"}); err != nil {
		t.Fatal(err)
	}
	err = closeJournal(j, nil)
	if !strings.Contains(fmt.Sprint(err), "run cnibench cleanup --journal-dir "+dir) {
		t.Errorf("kept journal says %v, want it to name cleanup --journal-dir %s", err, dir)
	}
}
