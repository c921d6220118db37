package envinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Version runs a program's own version argv (ab -V, nginx -v on stderr)
// and keeps the first line; a missing program gives "".
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = -v ] || exit 3\necho 'fake/1.2' >&2\necho second line >&2\n"
	if err := os.WriteFile(filepath.Join(dir, "cnbfake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got := Version([]string{"cnbfake", "-v"}); got != "fake/1.2" {
		t.Errorf("Version = %q, want fake/1.2", got)
	}
	if got := Version([]string{"cnbmissing", "--version"}); got != "" {
		t.Errorf("missing program: %q", got)
	}
	if got := Version(nil); got != "" {
		t.Errorf("no argv: %q", got)
	}
}

// A program that hangs instead of printing its version (a test fixture:
// a script that never exits) gives "" at the deadline, and the child it
// started is killed with it, not left to init.
func TestVersionOfAProgramThatHangs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tool")
	pidFile := filepath.Join(dir, "child.pid")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nsleep 600 &\necho $! > "+pidFile+"\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { childGone(t, pidFile) })
	saved := versionTimeout
	// Long enough for the script to start its child and write its PID
	// on a loaded machine (200 ms was not: "wrote no child PID"), short
	// against the 5 s a query has.
	versionTimeout = 2 * time.Second
	t.Cleanup(func() { versionTimeout = saved })
	done := make(chan string, 1)
	go func() { done <- Version([]string{path, "--version"}) }()
	select {
	case v := <-done:
		if v != "" {
			t.Errorf("Version = %q, want \"\"", v)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Version did not return a minute after its %v deadline", versionTimeout)
	}
}

// childGone fails the test when the process whose PID a fixture wrote to
// pidFile is still alive a few seconds later (and kills it then).
func childGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fixture wrote no child PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(st), ") Z ") {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the hung program's child %d outlived it", pid)
}

// cpuIdle reads the driver, the governor and CPU 0's states in their
// order (state10 after state9), with disabled ones marked; a machine

// A memory-only NUMA node (empty cpulist) is no node placements can
// differ by: one socket with CXL memory is one node, as the inspection
// counts it; no node directory at all is one node too.
func TestNUMANodesWithCPUs(t *testing.T) {
	dir := t.TempDir()
	write := func(p, v string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("devices/system/cpu/online", "0-15\n")
	for c := 0; c < 16; c++ {
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", c), fmt.Sprintln(c/8))
		write(fmt.Sprintf("devices/system/cpu/cpu%d/topology/core_id", c), fmt.Sprintln(c%8))
	}
	for node, cpus := range map[string]string{"node0": "0-7\n", "node1": "\n", "node2": "8-15\n"} {
		write("devices/system/node/"+node+"/cpulist", cpus)
	}
	if n := numaNodes(dir); n != 2 {
		t.Errorf("nodes with CPUs = %d, want 2 (node1 is memory-only)", n)
	}
	if n := numaNodes(t.TempDir()); n != 1 {
		t.Errorf("no node directories: %d, want 1", n)
	}
}
