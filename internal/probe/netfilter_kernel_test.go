package probe

import (
	"os"
	"testing"
)

// TestNetfilterProbes (root: it probes in a scratch namespace): the
// netfilter state's features are tried and answered, each available or
// with a reason, and nothing is left behind. Where a feature is missing
// the subtest skips with the probe's reason.
func TestNetfilterProbes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: probing kernel features needs root")
	}
	before := leftovers(t)
	for _, f := range []string{Iptables, NFTables, Dummy, IPSet} {
		t.Run(f, func(t *testing.T) {
			ok, why := Has(f)
			if !ok {
				if why == "" {
					t.Errorf("%s missing without a reason", f)
				}
				t.Skipf("skipped: %s: %s", f, why)
			}
			t.Logf("%s: %s", f, why)
		})
	}
	checkLeftovers(t, before)
}
