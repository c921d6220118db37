package cleanup

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune"
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

// TestDryRunSaysWhatCleanupDoes: run A set 0->32768 and crashed, run B
// then 32768->16384 and crashed. The real cleanup restores both (B's
// undo gives 32768, A's then finds it); the dry run said A's value was
// changed since, as it found 16384 with nothing restored. It now reads
// on from what B's would-restore would write back, and writes nothing.
func TestDryRunSaysWhatCleanupDoes(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	now := time.Now().UTC()
	writeCrashed(t, dir, "a1", now.Add(-time.Hour), journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"})
	writeCrashed(t, dir, "b1", now.Add(-time.Minute), journal.Set{FS: journal.FSProc, Path: knob, Old: "32768", New: "16384"})
	fs := &mapFS{vals: map[string]string{"|" + knob: "16384"}}
	rep, err := Run(context.Background(), Options{JournalDir: dir, FS: fs, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range rep.Actions {
		if a.Kind == ActRevert {
			got = append(got, a.Run+" "+strings.SplitN(a.Detail, ";", 2)[0])
		}
	}
	if want := []string{"b1 " + tune.Planned, "a1 " + tune.Planned}; !slices.Equal(got, want) {
		t.Errorf("dry run's reverts %q, want %q", got, want)
	}
	if v := fs.vals["|"+knob]; v != "16384" {
		t.Errorf("the dry run wrote %s", v)
	}
}
