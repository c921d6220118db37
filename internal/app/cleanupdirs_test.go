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

	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/prove"
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

// stubMachineLock replaces the machine's lock with one at a file of the
// test's and the record with one of its own; opts collects the options
// lockMachine was given.
func stubMachineLock(t *testing.T) *[]runner.Options {
	oldRecord, oldLock := dirsRecord, lockMachine
	dirsRecord = filepath.Join(t.TempDir(), "journal-dirs")
	lockPath := filepath.Join(t.TempDir(), "lock")
	var opts []runner.Options
	lockMachine = func(o runner.Options) (*journal.Lock, error) {
		opts = append(opts, o)
		return journal.LockHost(lockPath)
	}
	t.Cleanup(func() { dirsRecord, lockMachine = oldRecord, oldLock })
	return &opts
}

// writeDeadJournal leaves in dir the journal of a run that was killed.
func writeDeadJournal(t *testing.T, dir, id string) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	h, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: id, PID: dead.Process.Pid, PIDStart: 1, Started: time.Now().UTC(), Prefix: "cnb-"}})
	if err := os.WriteFile(filepath.Join(dir, id+journal.Ext), append(h, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBeginRunNamesItsDirsCleanup: a run refused for a dead journal in
// its own directory is told the cleanup that reaches it: a kube run's
// cleanup --kube (its directory, /run/cnibench/kube, holds the cluster's
// journals), a local run of another directory cleanup --journal-dir
// DIR. Before, both were told plain `cnibench cleanup`, which does
// nothing for either: the refusal came back after it.
func TestBeginRunNamesItsDirsCleanup(t *testing.T) {
	stubMachineLock(t)
	dir := t.TempDir()
	writeDeadJournal(t, dir, "killed")
	kubeCleanup := "cnibench cleanup --kube --kubeconfig /k --context c"
	for _, c := range []struct {
		opt  runner.Options
		want string
	}{
		{runner.Options{Engine: "kube", Cleanup: kubeCleanup}, kubeCleanup},
		{runner.Options{Engine: "local"}, "cnibench cleanup --journal-dir " + dir},
	} {
		l, err := beginRun(&c.opt, dir)
		if err == nil || !strings.Contains(err.Error(), "undo them first with: "+c.want) {
			l.Release()
			t.Errorf("%s run of %s = %v, want a refusal naming %q", c.opt.Engine, dir, err, c.want)
		}
	}
}

// TestProveClaimsWithItsCluster: advise --prove --engine kube claims the
// machine with its cluster's configuration, from which LockMachine
// tells whether its nodes run on this kernel (and then takes the lock).
// Before, it gave none, and LockMachine, unable to tell, took no lock:
// the A/B runs of nodes on this kernel kept no local run away.
func TestProveClaimsWithItsCluster(t *testing.T) {
	opts := stubMachineLock(t)
	cfg := &kube.Config{}
	claim := proveRun(prove.Options{Engine: "kube", Kube: cfg}, pflag.NewFlagSet("advise", pflag.ContinueOnError))
	l, err := beginRun(&claim, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if len(*opts) != 1 || (*opts)[0].Kube != cfg || (*opts)[0].Engine != "kube" {
		t.Fatalf("lockMachine given %+v, want the kube engine and its cluster", *opts)
	}
	if !claim.MachineLocked || !strings.HasPrefix(claim.Cleanup, "cnibench cleanup --kube") {
		t.Errorf("claim = locked %v, cleanup %q; want locked, cleanup --kube", claim.MachineLocked, claim.Cleanup)
	}
}
