package probe

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBrNetfilterProbe checks the br_netfilter probe against what a
// process in a new network namespace reads (unshare -n, which leaves no
// namespace behind): present with its value, or missing with the way to
// load it. This machine has br_netfilter built in, so the present case
// runs here; the full-kernel VM loads the module.
func TestBrNetfilterProbe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: probing kernel features needs root (scratch namespaces)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("skipped: unshare (util-linux) not found; it reads the sysctl in a new namespace independently of the probe")
	}
	out, err := exec.Command("unshare", "-n", "cat", BrNetfilterSysctl).CombinedOutput()
	before := leftovers(t)
	res := probeSome(context.Background(), []string{BrNetfilter})
	checkLeftovers(t, before)
	if len(res) != 1 || res[0].Name != BrNetfilter || res[0].Kind != KindKernel {
		t.Fatalf("probe results %+v, want one kernel result for %s", res, BrNetfilter)
	}
	r := res[0]
	t.Logf("%s ok=%v: %s", r.Name, r.OK, r.Detail)
	if err == nil {
		want := "bridge-nf-call-iptables=" + strings.TrimSpace(string(out)) + " "
		if !r.OK || !strings.Contains(r.Detail, want) {
			t.Errorf("a new namespace has %s = %s, but the probe says ok=%v %q (want %q in it)", BrNetfilterSysctl, strings.TrimSpace(string(out)), r.OK, r.Detail, want)
		}
		return
	}
	if r.OK || !strings.Contains(r.Detail, "modprobe br_netfilter") {
		t.Errorf("a new namespace has no %s (%s), but the probe says ok=%v %q", BrNetfilterSysctl, strings.TrimSpace(string(out)), r.OK, r.Detail)
	}
}
