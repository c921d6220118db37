package probe

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSysctlValueProbes (root: it probes in a scratch namespace): a
// default qdisc and a congestion control the kernel has pass, and ones
// it has no module for are refused naming the module, before any trial
// writes them. reno and pfifo_fast are built into every kernel.
func TestSysctlValueProbes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: probing kernel features needs root")
	}
	before := leftovers(t)
	for _, c := range []struct {
		name, value string
		inNetns     bool
		ok          bool
		says        string
	}{
		{sysctlDefaultQdisc, "pfifo_fast", true, true, ""},
		{sysctlDefaultQdisc, "cnbnosuch", false, false, "sch_cnbnosuch"},
		{sysctlCongestion, "reno", true, true, ""},
		{sysctlCongestion, "reno", false, true, ""},
		{sysctlCongestion, "cnbnosuch", true, false, "cnbnosuch"},
		{sysctlCongestion, "cnbnosuch", false, false, "cnbnosuch"},
	} {
		ok, why := Has(SysctlValue(c.name, c.value, c.inNetns))
		if ok != c.ok || !strings.Contains(why, c.says) {
			t.Errorf("%s=%s: %v %q, want %v naming %q", c.name, c.value, ok, why, c.ok, c.says)
		}
		t.Logf("%s=%s: %v %s", c.name, c.value, ok, why)
	}
	checkLeftovers(t, before)
}

// TestCongestionNotAllowedOutsideHost (root): an algorithm the kernel has
// but does not allow outside the host's namespace
// (tcp_allowed_congestion_control, Linux 5.13 on) is refused for a
// tuning that writes it in a node's or pods' namespace, and available
// for one that writes it in the host's (a cluster node's agent): the
// probe refused both, so a bbr-against-cubic study on cluster nodes
// that allow only "reno cubic" was refused though its writes work.
func TestCongestionNotAllowedOutsideHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: probing kernel features needs root")
	}
	algo := ""
	avail, err1 := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	allowed, err2 := os.ReadFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
	if err1 != nil || err2 != nil {
		t.Skipf("skipped: no congestion control lists: %v %v", err1, err2)
	}
	for _, a := range strings.Fields(string(avail)) {
		if !slices.Contains(strings.Fields(string(allowed)), a) {
			algo = a
			break
		}
	}
	if algo == "" {
		t.Skipf("skipped: every available congestion control (%s) is allowed outside the host's namespace here", strings.TrimSpace(string(avail)))
	}
	if ok, why := Has(SysctlValue(sysctlCongestion, algo, true)); ok || !strings.Contains(why, "tcp_allowed_congestion_control") {
		t.Errorf("%s in a node's namespace: %v %q, want refused naming the allowed list", algo, ok, why)
	}
	if ok, why := Has(SysctlValue(sysctlCongestion, algo, false)); !ok {
		t.Errorf("%s in the host's namespace: refused: %s", algo, why)
	}
}
