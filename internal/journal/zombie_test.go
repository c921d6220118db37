package journal

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leaderExitHelperEnv makes the test binary end its first thread alone
// (SYS_EXIT, not exit_group) while another runs on: its /proc/PID/stat
// then says Z while the process holds its files and namespaces.
const leaderExitHelperEnv = "CNIBENCH_JOURNAL_LEADER_EXIT_HELPER"

// The main function runs on the first thread only where an init locks
// it there (runtime.LockOSThread's contract).
func init() {
	if os.Getenv(leaderExitHelperEnv) != "" {
		runtime.LockOSThread()
	}
}

// leaderExit is the helper's body, called from TestMain.
func leaderExit() {
	go func() {
		for {
			time.Sleep(time.Hour)
		}
	}()
	os.Stdout.WriteString("ready\n")
	syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
}

// A process whose first thread exited while another runs shows Z in
// /proc/PID/stat; it was taken for exited, so cleanup neither killed it
// nor waited for it, and unmounted a namespace it still held. Its other
// threads make it alive.
func TestLeaderExitedProcessIsAlive(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderExitHelperEnv+"=1")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper said %q", line)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile("/proc/" + itoa(pid) + "/stat")
		if state, _, err := parseStat(string(b)); err == nil && state == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Skip("skipped: the helper's first thread did not exit alone (its stat never said Z)")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start, err := ProcessStart(pid)
	if err != nil {
		t.Fatalf("a process whose first thread exited, others running: %v, want alive", err)
	}
	if !ProcessAlive(pid, start) {
		t.Error("not alive")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := ProcessStart(pid); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("after it was killed and reaped: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
