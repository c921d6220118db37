package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// writeCrashed writes the journal a crashed run leaves: its header and
// one host value it set, not reverted.
func writeCrashed(t *testing.T, dir, run string, started time.Time, s journal.Set) {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: run, PID: deadPID(t), PIDStart: 1, Started: started, Prefix: "cnb-"}})
	e, _ := json.Marshal(map[string]any{"seq": 1, "set": s})
	if err := os.WriteFile(filepath.Join(dir, run+journal.Ext), append(append(h, '\n'), append(e, '\n')...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeCrashedObject writes the journal of a run that recorded o and
// was killed.
func writeCrashedObject(t *testing.T, dir, run string, o journal.Object) {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: run, PID: deadPID(t), PIDStart: 1, Started: time.Now().UTC(), Prefix: "cnb-"}})
	e, _ := json.Marshal(map[string]any{"seq": 1, "object": o})
	if err := os.WriteFile(filepath.Join(dir, run+journal.Ext), append(append(h, '\n'), append(e, '\n')...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTwoCrashedRunsNewestFirst is issue 15's scenario: run A sets
// 0->32768 and crashes; run B (started later, before anyone cleaned up)
// sets 32768->16384 and crashes. Cleanup must end at 0 whatever the file
// names: B is undone first (back to 32768, what A wrote), then A.
func TestTwoCrashedRunsNewestFirst(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	for name, ids := range map[string][2]string{"older sorts first": {"a1", "b1"}, "older sorts last": {"z1", "b1"}} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			now := time.Now().UTC()
			writeCrashed(t, dir, ids[0], now.Add(-time.Hour), journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "32768"})
			writeCrashed(t, dir, ids[1], now.Add(-time.Minute), journal.Set{FS: journal.FSProc, Path: knob, Old: "32768", New: "16384"})
			fs := &mapFS{vals: map[string]string{"|" + knob: "16384"}}
			rep, err := Run(context.Background(), Options{JournalDir: dir, FS: fs})
			if err != nil {
				t.Fatalf("cleanup: %v\n%v", err, rep.Actions)
			}
			if got := fs.vals["|"+knob]; got != "0" {
				t.Fatalf("value after cleanup %s, want 0; actions %v", got, rep.Actions)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("dir holds %v", ents)
			}
		})
	}
}

// TestCleanupRefusedWhileLocked: cleanup takes the host lock, so it never
// runs beside a run (whose "old" values it would pull from under it).
func TestCleanupRefusedWhileLocked(t *testing.T) {
	dir := t.TempDir()
	writeCrashed(t, dir, "r1", time.Now(), journal.Set{FS: journal.FSProc, Path: "/proc/sys/x", Old: "0", New: "1"})
	l, err := journal.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fs := &mapFS{vals: map[string]string{"|/proc/sys/x": "1"}}
	_, err = Run(context.Background(), Options{JournalDir: dir, FS: fs})
	var be *journal.BusyError
	if !errors.As(err, &be) || len(fs.writes) != 0 {
		t.Fatalf("cleanup while locked = %v, writes %v", err, fs.writes)
	}
	l.Release()
	if _, err := Run(context.Background(), Options{JournalDir: dir, FS: fs}); err != nil || fs.vals["|/proc/sys/x"] != "0" {
		t.Fatalf("cleanup after release = %v, %v", err, fs.vals)
	}
}

// Undoing is told each dead run's journal before its undo and released
// after it: the command's signal handler counts it as held meanwhile
// (the journal is still on disk while the run is undone).
func TestUndoingBracketsEachRun(t *testing.T) {
	const knob = "/proc/sys/net/core/rps_sock_flow_entries"
	dir := t.TempDir()
	writeCrashed(t, dir, "u1", time.Now().UTC(), journal.Set{FS: journal.FSProc, Path: knob, Old: "0", New: "1"})
	fs := &mapFS{vals: map[string]string{"|" + knob: "1"}}
	var events []string
	undoing := func(path string) func() {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Undoing(%s): the journal is not on disk: %v", path, err)
		}
		events = append(events, "start "+filepath.Base(path)+" "+fs.vals["|"+knob])
		return func() { events = append(events, "done "+filepath.Base(path)+" "+fs.vals["|"+knob]) }
	}
	if _, err := Run(context.Background(), Options{JournalDir: dir, FS: fs, Undoing: undoing}); err != nil {
		t.Fatal(err)
	}
	want := "start u1" + journal.Ext + " 1,done u1" + journal.Ext + " 0"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("Undoing calls %q, want %q", got, want)
	}
}
