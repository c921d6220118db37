package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/progress"
)

// TestRunTakesTheMachineLock: a local run is refused, before its
// preflight probes anything, while another run holds the machine's lock,
// though the two journal in different directories (--journal-dir). They
// only took their own directory's lock before: run A set
// rps_sock_flow_entries 0->32768, run B 32768->16384, A's revert then left
// B's value alone as someone else's and B put back A's 32768, leaving the
// machine changed with no journal pending.
func TestRunTakesTheMachineLock(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "cnibench.lock")
	old := hostLockPath
	hostLockPath = lockPath
	t.Cleanup(func() { hostLockPath = old })

	// Run A: its own journal directory, holding the machine's lock.
	dirA := t.TempDir()
	j, err := journal.Open(dirA, "runa", "cnb-")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	held, err := journal.LockHost(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	// Run B journals elsewhere; its own directory's lock is free.
	dirB := t.TempDir()
	dirLock, err := journal.BeginRun(dirB, "")
	if err != nil {
		t.Fatal(err)
	}
	defer dirLock.Release()
	out := filepath.Join(t.TempDir(), "run")
	// A study this machine cannot run (CPU 1000) fails its first check
	// without the lock, before any probe: should the lock go missing,
	// this test changes nothing on the machine either.
	_, err = Run(context.Background(), Options{Study: cpuStudy(t, "1000"), OutDir: out, JournalDir: dirB,
		Progress: progress.New(io.Discard)})
	var be *journal.BusyError
	if !errors.As(err, &be) || !IsPreflight(err) {
		t.Fatalf("run B beside run A = %v; want a preflight *journal.BusyError", err)
	}
	if !strings.Contains(err.Error(), "run runa (pid ") || !strings.Contains(err.Error(), filepath.Join(dirA, "runa.journal")) {
		t.Errorf("refusal does not name run A and its journal: %v", err)
	}
	if ents, _ := os.ReadDir(dirB); len(ents) != 0 {
		t.Errorf("refused run wrote %v in its journal directory", ents)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused run made its run directory (%v)", err)
	}

	// A kube run without its cluster's configuration cannot tell where
	// its nodes run: it takes no lock here (each of its runs decides).
	for _, o := range []Options{{Engine: "kube"}, {}, {Engine: "local"}} {
		changes, _, err := changesThisMachine(o)
		if err != nil || changes != (o.Engine != "kube") {
			t.Errorf("changesThisMachine(%q) = %v, %v; want every engine but kube", o.Engine, changes, err)
		}
	}
}

// TestKubeRunOnThisKernelTakesTheMachineLock: a kube run whose nodes
// report this machine's boot ID (kind, the test cluster) changes this
// machine's values through their agents, so it takes the machine's lock
// like a local run and is refused while one holds it (and a local run
// while it does), naming the node and the kernel; a kube run on other
// kernels takes none. It took none before: a local run and a kube run on
// one kernel journaled each other's RFS table.
func TestKubeRunOnThisKernelTakesTheMachineLock(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "cnibench.lock")
	oldPath, oldLocal, oldKube := hostLockPath, localBootID, kubeBootIDs
	t.Cleanup(func() { hostLockPath, localBootID, kubeBootIDs = oldPath, oldLocal, oldKube })
	hostLockPath = lockPath
	localBootID = func() (string, error) { return "boot-here", nil }
	nodes := map[string]string{"w1": "boot-here", "w2": "boot-here"}
	kubeBootIDs = func(context.Context, kube.Config) (map[string]string, error) { return nodes, nil }
	kubeOpt := Options{Engine: "kube", Kube: &kube.Config{}}

	l, err := LockMachine(kubeOpt)
	if err != nil || l == nil {
		t.Fatalf("kube run on this kernel: LockMachine = %v, %v; want the lock", l, err)
	}
	if other, err := LockMachine(Options{Engine: "local"}); !IsPreflight(err) {
		other.Release()
		t.Fatalf("local run beside it = %v; want refused", err)
	}
	l.Release()
	held, err := LockMachine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockMachine(kubeOpt)
	var be *journal.BusyError
	if !errors.As(err, &be) || !IsPreflight(err) || !strings.Contains(err.Error(), "node w1, w2 runs on this machine's kernel (boot ID boot-here)") {
		t.Errorf("kube run beside a local run = %v; want a preflight *journal.BusyError naming the nodes and the kernel", err)
	}
	held.Release()

	nodes = map[string]string{"w1": "boot-a", "w2": ""}
	if l, err := LockMachine(kubeOpt); l != nil || err != nil {
		t.Errorf("kube run on other kernels: LockMachine = %v, %v; want no lock", l, err)
	}
	kubeBootIDs = func(context.Context, kube.Config) (map[string]string, error) { return nil, kube.ErrNoNode }
	if _, err := LockMachine(kubeOpt); !IsPreflight(err) || !errors.Is(err, kube.ErrNoNode) {
		t.Errorf("nodes not found: %v; want a preflight refusal", err)
	}
	if got := onThisKernel("x", map[string]string{"b": "x", "a": "x", "c": "y", "d": ""}); strings.Join(got, ",") != "a,b" {
		t.Errorf("onThisKernel = %v", got)
	}
	if got := onThisKernel("", map[string]string{"a": ""}); len(got) != 0 {
		t.Errorf("unknown boot IDs match: %v", got)
	}
}

// TestMachineLockedAcrossRuns: a caller holding the machine's lock over
// several runs (advise --prove's candidates) runs them without being
// refused by its own lock, while another process is still refused; a
// kube run takes none. advise took the lock per A/B run before, so a run
// started between two candidates made the next one fail.
func TestMachineLockedAcrossRuns(t *testing.T) {
	lockPath := filepath.Join(t.TempDir(), "cnibench.lock")
	old := hostLockPath
	hostLockPath = lockPath
	t.Cleanup(func() { hostLockPath = old })

	held, err := LockMachine(Options{})
	if err != nil || held == nil {
		t.Fatalf("LockMachine = %v, %v; want the lock", held, err)
	}
	defer held.Release()
	if other, err := LockMachine(Options{Engine: "local"}); !IsPreflight(err) {
		other.Release()
		t.Fatalf("a second LockMachine while held = %v; want a preflight refusal", err)
	}
	if l, err := LockMachine(Options{Engine: "kube"}); l != nil || err != nil {
		t.Errorf("LockMachine for kube = %v, %v; want no lock", l, err)
	}
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "run")
		// CPU 1000 fails the run's first check, after the lock and
		// before any probe: nothing on the machine changes.
		_, err := Run(context.Background(), Options{Study: cpuStudy(t, "1000"), OutDir: out, JournalDir: t.TempDir(),
			Progress: progress.New(io.Discard), MachineLocked: true})
		var be *journal.BusyError
		if errors.As(err, &be) || err == nil || !strings.Contains(err.Error(), "1000") {
			t.Fatalf("run %d under the caller's lock = %v; want the study's CPU refusal, not the lock's", i, err)
		}
	}
}
