package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/netns"
)

const tiedHelperEnv = "CNIBENCH_TIED_HELPER"

// tiedHelper is the parent of TestStartTiedDiesWithParent: it starts a
// tied sleep, throws away a few locked threads (as netns.Do does every
// time the agent reads a pod's namespace), prints the sleep's pid and
// waits to be killed.
func tiedHelper() {
	p, err := StartTied(context.Background(), []string{"sleep", "60"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for range 8 {
		_ = netns.Do("", func() error { return nil })
	}
	time.Sleep(200 * time.Millisecond)
	fmt.Println(p.(*process).cmd.Process.Pid)
	time.Sleep(time.Minute)
}

// A tied program outlives the threads the process throws away (a
// Pdeathsig set on one of them would kill it at once) and dies with the
// process when that is killed outright (SIGKILL: no cleanup of its own
// runs), so a killed agent session leaves no perf sampling the node.
func TestStartTiedDiesWithParent(t *testing.T) {
	if os.Getenv(tiedHelperEnv) == "1" {
		tiedHelper()
		return
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestStartTiedDiesWithParent$")
	parent.Env = append(os.Environ(), tiedHelperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	defer func() {
		if running(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	if !running(pid) {
		t.Fatal("the tied program died while its parent lived (Pdeathsig of a thrown-away thread?)")
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the tied program outlived its parent's SIGKILL by 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether pid is a live process (a zombie is dead).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z' && s[i+2] != 'X'
}
