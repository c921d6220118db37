package probe

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// rfsHelperEnv makes the test binary print rfsTableIn(its value) and
// exit (see TestMain): run in a network namespace of its own, it plays
// cnibench in a container.
const rfsHelperEnv = "CNIBENCH_PROBE_RFS_PROCROOT"

func rfsHelper(procRoot string) int {
	ok, detail := rfsTableIn(procRoot)
	fmt.Printf("%v %s\n", ok, detail)
	return 0
}

// TestRFSTableInAContainer: in a container with network and PID
// namespaces of its own, PID 1 is the container's init, so the RFS
// table, which only the host's network namespace has, is missing where
// the probe looks. It said "this kernel was built without RFS"; now it
// says to run in the host's network namespace. The container is played
// by a process in a new network namespace whose /proc shows no PID 1
// (an empty directory as procRoot); the host's is found through /proc.
func TestRFSTableInAContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root for a network namespace")
	}
	if _, err := os.Stat(rfsTable); err != nil {
		t.Skipf("skipped: this host has no %s: %v", rfsTable, err)
	}
	run := func(procRoot string) string { return inNewNetns(t, rfsHelperEnv+"="+procRoot) }
	got := run(t.TempDir())
	if !strings.HasPrefix(got, "false ") || !strings.Contains(got, "host's network namespace") ||
		!strings.Contains(got, "--network host") || strings.Contains(got, "built without") {
		t.Errorf("in a container's network namespace: %q, want it told to run in the host's network namespace", got)
	}
	// Where PID 1 is the machine's init, the host's table is found.
	if _, err := os.Stat("/proc/1/ns/net"); err == nil {
		if got := run("/proc"); !strings.HasPrefix(got, "true") {
			t.Errorf("through the init namespace: %q, want the table found", got)
		}
	}
}

// inNewNetns runs this test binary again, running no test, in a new
// network namespace (a container's, as far as /proc/sys/net shows) with
// env set for the helper its TestMain runs, and returns what it printed.
func inNewNetns(t *testing.T, env string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}
