package app

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/runner"
)

// TestRunRefusedForDeadJournalOfRecordedDir: a local run records its
// journal directory and is refused while another recorded directory
// holds a dead run's journal, naming that directory's cleanup. Before,
// a run of the default directory started on what a killed run of
// --journal-dir /tmp/j left, journaled it as old, and the two cleanups
// left the machine changed. Takes the machine's lock: run under the
// test flock.
func TestRunRefusedForDeadJournalOfRecordedDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("takes the machine's lock: needs root")
	}
	old := dirsRecord
	dirsRecord = filepath.Join(t.TempDir(), "journal-dirs")
	t.Cleanup(func() { dirsRecord = old })
	a, b := t.TempDir(), t.TempDir()
	l, err := claimMachine(runner.Options{Engine: "local"}, a)
	if err != nil {
		t.Fatalf("first run of %s: %v", a, err)
	}
	l.Release()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: "killed", PID: dead.Process.Pid, PIDStart: 1, Started: time.Now().UTC(), Prefix: "cnb-"}})
	if err := os.WriteFile(filepath.Join(a, "killed"+journal.Ext), append(h, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = claimMachine(runner.Options{Engine: "local"}, b)
	var se *journal.StaleError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "cnibench cleanup --journal-dir "+a) {
		l.Release()
		t.Fatalf("run of %s beside a dead journal in %s = %v, want a refusal naming its cleanup", b, a, err)
	}
	// Refused whole: the machine's lock was let go.
	l, err = journal.LockHost(journal.HostLockPath)
	if err != nil {
		t.Fatalf("the refused run kept the machine's lock: %v", err)
	}
	l.Release()
	// A kube run changes nothing here: neither locked nor refused.
	if l, err := claimMachine(runner.Options{Engine: "kube"}, b); err != nil || l != nil {
		t.Errorf("kube run = %v, %v; want no lock, no refusal", l, err)
	}
}

// A kube run whose nodes share this kernel takes the machine's lock but
// never records its directory: it holds controller journals, whose
// changes are the cluster's, and the local cleanup replays the recorded
// directories against this machine. A local run's is recorded.
func TestKubeRunDirNotRecorded(t *testing.T) {
	oldRecord, oldLock := dirsRecord, lockMachine
	dirsRecord = filepath.Join(t.TempDir(), "journal-dirs")
	lockPath := filepath.Join(t.TempDir(), "lock")
	lockMachine = func(runner.Options) (*journal.Lock, error) { return journal.LockHost(lockPath) }
	t.Cleanup(func() { dirsRecord, lockMachine = oldRecord, oldLock })
	kubeDir, localDir := t.TempDir(), t.TempDir()
	for _, c := range []struct{ engine, dir string }{{"kube", kubeDir}, {"local", localDir}} {
		l, err := claimMachine(runner.Options{Engine: c.engine}, c.dir)
		if err != nil || l == nil {
			t.Fatalf("%s run: lock %v, %v", c.engine, l, err)
		}
		l.Release()
	}
	dirs, err := journal.Dirs(dirsRecord, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 1 || dirs[0] != localDir {
		t.Errorf("recorded %q, want only the local run's %s", dirs, localDir)
	}
}
