package probe

import (
	"os"
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
		ok          bool
		says        string
	}{
		{sysctlDefaultQdisc, "pfifo_fast", true, ""},
		{sysctlDefaultQdisc, "cnbnosuch", false, "sch_cnbnosuch"},
		{sysctlCongestion, "reno", true, ""},
		{sysctlCongestion, "cnbnosuch", false, "cnbnosuch"},
	} {
		ok, why := Has(SysctlValue(c.name, c.value))
		if ok != c.ok || !strings.Contains(why, c.says) {
			t.Errorf("%s=%s: %v %q, want %v naming %q", c.name, c.value, ok, why, c.ok, c.says)
		}
		t.Logf("%s=%s: %v %s", c.name, c.value, ok, why)
	}
	checkLeftovers(t, before)
}
