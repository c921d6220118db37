package cleanup

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
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
