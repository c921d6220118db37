package netfilter

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/iptables"
)

// Traversed names what the iptables collector counts: a rule whose
// counter went back (its chain rewritten, as kube-proxy's sync does) and
// counted since is on the path, one back at 0 is not.
func TestTraversedAgreesAcrossReset(t *testing.T) {
	before, err := iptables.Parse([]byte("*nat\n:PREROUTING ACCEPT [0:0]\n:X - [0:0]\n[5000:1] -A PREROUTING -j X\n[5000:1] -A X -j DNAT\nCOMMIT\n"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := iptables.Parse([]byte("*nat\n:PREROUTING ACCEPT [0:0]\n:X - [0:0]\n[200:1] -A PREROUTING -j X\n[0:0] -A X -j DNAT\nCOMMIT\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := Traversed(before, after)
	p := iptables.Traversed(before, after)
	if !slices.Equal(m.Chains, []string{"nat/PREROUTING"}) || len(m.Rules) != 1 || len(m.Rules) != p.Rules || len(m.Chains) != p.Chains {
		t.Errorf("moved %+v, the collector's path %+v: want PREROUTING's rule alone in both", m, p)
	}
}
