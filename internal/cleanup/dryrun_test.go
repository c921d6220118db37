package cleanup

import (
	"context"
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// hookFS calls hook on every read: what happens on the host while a
// cleanup is busy with a journal.
type hookFS struct {
	*mapFS
	hook func()
}

func (h hookFS) Read(ns, kind, p string) (string, error) {
	h.hook()
	return h.mapFS.Read(ns, kind, p)
}

// TestDryRunDoesNotLookAlive: a run starting while `cleanup --dry-run`
// reads a dead run's journal is refused, and so is a cleanup. Before,
// the dry run held the journal's lock while it worked on it; BeginRun took
// the held lock for a live owner and let the run start beside the dead
// run's changes, and a cleanup skipped the journal.
func TestDryRunDoesNotLookAlive(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	run := tunetest.NewID()
	writeJournal(t, dir, run, map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"}})
	var during []error
	fsys := hookFS{&mapFS{vals: map[string]string{"|" + knob: "32768"}}, func() {
		l, err := journal.BeginRun(dir, "")
		l.Release()
		during = append(during, err)
		l, err = journal.LockDir(dir)
		l.Release()
		during = append(during, err)
	}}
	if _, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fsys, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if len(during) != 2 {
		t.Fatalf("the dry run read no value: %v", during)
	}
	for i, err := range during {
		var be *journal.BusyError
		var se *journal.StaleError
		if !errors.As(err, &be) && !errors.As(err, &se) {
			t.Errorf("%s during a dry run = %v, want refused", []string{"a run", "a cleanup"}[i], err)
		}
	}
}

// TestDryRunBesideLiveRun: the host lock held by a run does not stop a
// dry run from reporting (it reads without the lock).
func TestDryRunBesideLiveRun(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	run := tunetest.NewID()
	writeJournal(t, dir, run, map[string]any{"seq": 1, "set": journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"}})
	l, err := journal.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	fsys := &mapFS{vals: map[string]string{"|" + knob: "32768"}}
	rep, err := Run(context.Background(), Options{JournalDir: dir, Run: run, FS: fsys, DryRun: true})
	if err != nil || count(rep, ActRevert) != 1 {
		t.Fatalf("dry run beside a held lock: %v, %v", err, rep.Actions)
	}
}
