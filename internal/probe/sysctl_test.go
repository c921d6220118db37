package probe

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// sysctlHelperEnv makes the test binary print sysctlIn of its value
// ("PROCROOT NAME") and exit (see TestMain): run in a network namespace
// of its own, it plays cnibench in a container.
const sysctlHelperEnv = "CNIBENCH_PROBE_SYSCTL"

func sysctlHelper(arg string) int {
	procRoot, name, _ := strings.Cut(arg, " ")
	ok, detail := sysctlIn(procRoot, name)
	fmt.Printf("%v %s\n", ok, detail)
	return 0
}

// TestGlobalSysctlInAContainer: in a container with network and PID
// namespaces of its own, PID 1 is the container's init, so a global
// sysctl (net.core.netdev_max_backlog), which only the host's network
// namespace has, is missing where the probe looks. It said "this kernel
// has no ..."; now it says to run in the host's network namespace. The
// container is played as in TestRFSTableInAContainer.
func TestGlobalSysctlInAContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root for a network namespace")
	}
	const name = "net.core.netdev_max_backlog"
	if _, err := os.Stat("/proc/sys/net/core/netdev_max_backlog"); err != nil {
		t.Skipf("skipped: this host has no %s: %v", name, err)
	}
	run := func(procRoot string) string { return inNewNetns(t, sysctlHelperEnv+"="+procRoot+" "+name) }
	got := run(t.TempDir())
	if !strings.HasPrefix(got, "false ") || !strings.Contains(got, "host's network namespace") ||
		!strings.Contains(got, "--network host") || strings.Contains(got, "this kernel has no") {
		t.Errorf("in a container's network namespace: %q, want it told to run in the host's network namespace", got)
	}
	// One the container's namespace shows read-only is the host's value
	// mirrored there (net.core.rmem_max since Linux 6.15): the host sets
	// it, so the advice is the same, not "no tuning can set it".
	if _, err := os.Stat("/proc/sys/net/core/rmem_max"); err == nil {
		switch got := inNewNetns(t, sysctlHelperEnv+"="+t.TempDir()+" net.core.rmem_max"); {
		case strings.HasPrefix(got, "true"):
			t.Logf("net.core.rmem_max is writable in a child namespace on this kernel: nothing mirrored to check")
		case !strings.Contains(got, "host's network namespace") || strings.Contains(got, "no tuning can set it"):
			t.Errorf("a mirrored read-only sysctl in a container's namespace: %q, want it told to run in the host's network namespace", got)
		}
	}
	// Where PID 1 is the machine's init, the host's sysctl is found.
	if _, err := os.Stat("/proc/1/ns/net"); err == nil {
		if got := run("/proc"); !strings.HasPrefix(got, "true") {
			t.Errorf("through the init namespace: %q, want the sysctl found", got)
		}
	}
}

// A sysctl the host shows read-only is the kernel's report: no tuning
// sets it, and preflight says so rather than the write failing mid-run.
func TestReadOnlySysctl(t *testing.T) {
	const name = "net.ipv4.tcp_available_congestion_control"
	if _, err := os.Stat("/proc/sys/net/ipv4/tcp_available_congestion_control"); err != nil {
		t.Skipf("skipped: no %s here: %v", name, err)
	}
	if ok, detail := sysctlIn("/proc", name); ok || !strings.Contains(detail, "read-only") {
		t.Errorf("sysctlIn(%s) = %v, %q; want refused as read-only", name, ok, detail)
	}
	if ok, detail := sysctlIn("/proc", "net.ipv4.tcp_congestion_control"); !ok && os.Geteuid() == 0 {
		t.Errorf("a writable sysctl refused: %s", detail)
	}
}
