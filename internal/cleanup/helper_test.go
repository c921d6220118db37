package cleanup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/tune/tunetest"
)

// A crash is played for real: the test binary re-executes itself as a
// "run" (helper mode), which journals and changes things, prints "ready"
// and blocks; the test kills it with SIGKILL. If the test dies first, the
// helper sees its stdin close and undoes everything itself.
const (
	helperEnv    = "CNIBENCH_CLEANUP_HELPER"
	helperDirEnv = "CNIBENCH_CLEANUP_HELPER_DIR"
	helperRunEnv = "CNIBENCH_CLEANUP_HELPER_RUN"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode, os.Getenv(helperDirEnv), os.Getenv(helperRunEnv)))
	}
	// The machine's lock of the tests is their own: a cleanup test of
	// fake values must neither wait for nor block a real run.
	lockDir, err := os.MkdirTemp("", "cnibench-cleanup-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hostLockPath = filepath.Join(lockDir, "cnibench.lock")
	code := m.Run()
	os.RemoveAll(lockDir)
	if leaks := tunetest.Leaks(); len(leaks) > 0 {
		fmt.Fprintln(os.Stderr, "kernel tests left behind:", leaks)
		code = 1
	}
	os.Exit(code)
}

// helperMain runs a helper mode. Each mode returns the ready line and an
// undo function for the graceful path.
func helperMain(mode, dir, run string) int {
	var ready string
	var undo func()
	var err error
	switch mode {
	case "journal":
		ready, undo, err = helperJournal(dir, run)
	case "apply":
		ready, undo, err = helperApply(dir, run)
	case "statedir":
		ready, undo, err = helperStateDir(dir, run)
	case "qdisc":
		ready, undo, err = helperQdisc(dir, run)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Println("error:", err)
		if undo != nil {
			undo()
		}
		return 1
	}
	fmt.Println("ready", ready)
	// Block until killed; a closed stdin means the test is gone.
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
	}
	undo()
	return 0
}

// pureSets are the values the "journal" helper claims to have changed.
func pureSets(run string) []journal.Set {
	node := "cnb-" + run + "-node"
	return []journal.Set{
		{FS: journal.FSProc, Path: "/proc/sys/net/core/rps_sock_flow_entries", Old: "0", New: "32768"},
		{Netns: node, FS: journal.FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_cpus", Old: "0", New: "00000003"},
		{Netns: node, FS: journal.FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_flow_cnt", Old: "0", New: "32768"},
		{Netns: node, FS: journal.FSSysfs, Path: "class/net/eth1/queues/rx-0/rps_cpus", Old: "00000003", New: "00000001"},
	}
}

// helperJournal only journals (no root needed): the test's fake FS plays
// the kernel.
func helperJournal(dir, run string) (string, func(), error) {
	j, err := journal.Open(dir, run, "cnb-")
	if err != nil {
		return "", nil, err
	}
	for _, s := range pureSets(run) {
		if _, err := j.RecordSet(s); err != nil {
			return "", nil, err
		}
	}
	return "", func() { j.Close() }, nil
}

// helper is a running helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready []string
}

// startHelper starts a helper and waits for its ready line.
func startHelper(t *testing.T, mode, dir, run string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDirEnv+"="+dir, helperRunEnv+"="+run)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin}
	t.Cleanup(h.stop)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case l := <-line:
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "ready" {
			t.Fatalf("helper: %q; stderr: %s", l, stderr.String())
		}
		h.ready = f[1:]
	case <-time.After(2 * time.Minute):
		t.Fatalf("helper not ready; stderr: %s", stderr.String())
	}
	return h
}

// crash kills the helper as kill -9 does and reaps it.
func (h *helper) crash(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.cmd.Wait()
}

// stop ends a helper still running the graceful way (it undoes its own
// changes), used when a test fails before crashing it.
func (h *helper) stop() {
	if h.cmd.ProcessState != nil {
		return
	}
	h.stdin.Close()
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.cmd.Process.Kill()
		<-done
	}
}
