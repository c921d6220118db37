package nsprocs

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// TestKillNamesSurvivors: a process that outlives the bounded wait is
// named (pid and command) in the error, and cleanup does not return
// early. A stopped process cannot be reaped while its parent (this test)
// does not wait, but SIGKILL ends a stopped process, so the survivor is
// played by a zero timeout.
func TestKillNamesSurvivors(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer cmd.Wait()
	start, err := journal.ProcessStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	err = Kill([]Proc{{cmd.Process.Pid, start}}, 0)
	if err == nil {
		// Exited (a zombie counts) before the first check: nothing to name.
		return
	}
	if want := fmt.Sprintf("%d (sleep)", cmd.Process.Pid); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
}

// TestKillOnlyTheRecordedProcess: a pid whose start time is not the
// recorded one is another process (the pid was recycled) and is left
// alone; the recorded one is killed.
func TestKillOnlyTheRecordedProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	start, err := journal.ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := KillOne(Proc{pid, start + 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("a process with another start time than recorded was killed")
	case <-time.After(200 * time.Millisecond):
	}
	if err := KillOne(Proc{pid, start}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the recorded process was not killed")
	}
}
