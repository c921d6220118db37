package kerneltest

import (
	"os/exec"
	"testing"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
)

// TestKernelNetnsKillsWhatTheTestLeft: a process a test started in its
// Netns namespace and did not stop is killed when the test ends, before
// the namespace is deleted. Before, the namespace was unmounted under it
// and it ran on in a namespace no name led to. The journal is the test's
// own (not /run/cnibench): nothing but its namespace is touched.
func TestKernelNetnsKillsWhatTheTestLeft(t *testing.T) {
	RequireRoot(t)
	id := RunID()
	j, err := journal.Open(t.TempDir(), id, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	var ns string
	t.Run("leaves a process", func(t *testing.T) {
		ns = Netns(t, j, id, "left")
		cmd = exec.Command("sleep", "600")
		if err := netns.Start(ns, nil, cmd); err != nil {
			t.Fatal(err)
		}
	})
	if cmd == nil || cmd.Process == nil {
		t.Fatal("no process started")
	}
	// A zombie (killed, not yet reaped by this test, its parent) is gone.
	_, err = journal.ProcessStart(cmd.Process.Pid)
	survived := err == nil
	if survived {
		cmd.Process.Kill()
	}
	cmd.Wait()
	if survived {
		t.Errorf("sleep (pid %d) outlived its test's namespace", cmd.Process.Pid)
	}
	if netns.Exists(ns) || netns.HalfMade(ns) {
		t.Errorf("namespace %s left", ns)
		netns.Delete(ns)
	}
	if err := j.Close(); err != nil {
		t.Error(err)
	}
}
