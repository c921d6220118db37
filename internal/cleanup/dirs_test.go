package cleanup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// TestCleanupReplaysRecordedDirsNewestFirst: run A of another journal
// directory set 0->32768 and was killed, run B of this one journaled
// 32768 as old, set 16384 and was killed. Replayed one directory at a
// time, B's undo gave 32768 and A's journal, found "changed since" by
// `cleanup --journal-dir`, was dropped: the machine stayed changed with
// no journal. With the machine's record, one cleanup replays both, B
// first, and ends at 0.
func TestCleanupReplaysRecordedDirsNewestFirst(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	record := filepath.Join(t.TempDir(), "journal-dirs")
	dirA, dirB := t.TempDir(), t.TempDir()
	now := time.Now().UTC()
	writeCrashed(t, dirA, "a1", now.Add(-time.Hour), journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"})
	writeCrashed(t, dirB, "b1", now.Add(-time.Minute), journal.Set{FS: journal.FSProc, Path: knob, Old: "32768", New: "16384"})
	for _, d := range []string{dirA, dirB} {
		if err := journal.NoteDir(record, d); err != nil {
			t.Fatal(err)
		}
	}
	fs := &mapFS{vals: map[string]string{"|" + knob: "16384"}}
	rep, err := Run(context.Background(), Options{JournalDir: dirB, DirsRecord: record, FS: fs})
	if err != nil {
		t.Fatalf("cleanup: %v\n%v", err, rep.Actions)
	}
	if got := fs.vals["|"+knob]; got != "0" {
		t.Fatalf("value after cleanup %s, want 0; actions %v", got, rep.Actions)
	}
	for _, d := range []string{dirA, dirB} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %v", d, ents)
		}
	}
}

// TestCleanupRemovesStateDirOfRecordedDir: a run of another journal
// directory (run --journal-dir /tmp/j, wiring cni) made its state
// directory below that directory, /tmp/j/state/RUN, and was killed. A
// plain cleanup, replaying the recorded directory, removes it (it looked
// below JournalDir, skipped the journaled one as not the run's and
// dropped the journal, leaving the CNI leases); and an orphan state
// directory there is seen, reported, and swept with Orphans. A user's
// directory there whose name cnibench would not make (a --journal-dir
// of a project with a state/notes of its own) is not cnibench's: left.
func TestCleanupRemovesStateDirOfRecordedDir(t *testing.T) {
	record := filepath.Join(t.TempDir(), "journal-dirs")
	dirA, dirB := t.TempDir(), t.TempDir()
	state, orphan, users := journal.StateDir(dirA, "a1"), journal.StateDir(dirA, "c0ffee"), journal.StateDir(dirA, "notes")
	for _, p := range []string{filepath.Join(state, "server", "networks", "cbr0"), orphan, users} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeCrashedObject(t, dirA, "a1", journal.Object{Kind: journal.KindDir, Name: state})
	if err := journal.NoteDir(record, dirA); err != nil {
		t.Fatal(err)
	}
	opts := Options{JournalDir: dirB, DirsRecord: record, Prefix: "cnb-" + tunetest.NewID(), FS: &mapFS{vals: map[string]string{}}}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("cleanup: %v\n%v", err, rep.Actions)
	}
	if count(rep, ActDir) != 1 || count(rep, ActJournal) != 1 || count(rep, ActSkip) != 1 {
		t.Errorf("actions %v: want the run's state directory removed, its journal removed, the orphan reported", rep.Actions)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state directory %s still there: %v", state, err)
	}
	opts.Orphans = true
	if rep, err = Run(context.Background(), opts); err != nil || count(rep, ActDir) != 1 {
		t.Fatalf("cleanup --orphans: %v\n%v", err, rep.Actions)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan state directory %s still there: %v", orphan, err)
	}
	if _, err := os.Stat(users); err != nil {
		t.Errorf("the user's %s was removed: %v", users, err)
	}
}
