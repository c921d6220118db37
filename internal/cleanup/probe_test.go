package cleanup

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// A probe killed with kill -9 leaves its scratch namespace (and anything
// it started there); cleanup deletes it, even when limited to another
// run, and leaves a live prober's alone.
func TestCleanupDeletesDeadProbeNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating namespaces needs root")
	}
	// A dead prober: a process whose pid and start time are known.
	gone := exec.Command("sleep", "600")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	start, err := journal.ProcessStart(gone.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	gone.Process.Kill()
	gone.Wait()
	dead := probe.ScratchName(gone.Process.Pid, start, "deadbeef")

	self, err := journal.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	live := probe.ScratchName(os.Getpid(), self, "livelive")
	for _, n := range []string{dead, live} {
		if err := netns.Add(n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if netns.Exists(n) {
				netns.Delete(n)
			}
		})
	}
	// What the killed probe left running in its namespace.
	left := exec.Command("sleep", "600")
	if err := netns.Start(dead, nil, left); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { left.Process.Kill(); left.Wait() })
	waited := make(chan struct{})
	go func() { left.Wait(); close(waited) }()

	rep, err := Run(context.Background(), Options{JournalDir: t.TempDir(), Run: "zzprobetest"})
	if err != nil {
		t.Fatal(err)
	}
	if netns.Exists(dead) {
		t.Errorf("dead probe's namespace %s left behind; report %v", dead, rep.Actions)
	}
	if !netns.Exists(live) {
		t.Errorf("live probe's namespace %s deleted", live)
	}
	<-waited // killed before its namespace went
	var deleted bool
	for _, a := range rep.Actions {
		if a.Run == ProbeRun && a.Kind == ActNetns && a.Object == dead {
			deleted = true
		}
		if a.Object == live {
			t.Errorf("live probe's namespace acted on: %v", a)
		}
	}
	if !deleted {
		t.Errorf("report does not name %s: %v", dead, rep.Actions)
	}
}
