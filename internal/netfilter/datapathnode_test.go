package netfilter_test

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/netfilter"
)

// TestDatapathNodeFits: what each datapath says of its nodes
// (DatapathNode), which study validation checks a CNI's rules against
// before anything is built, refuses what cannot fit: the bridge rules
// (weave, kube-router) on a datapath whose pods hang off no Linux bridge
// (calico-*, cilium, ovs), the IP-in-IP rules (calico-*-ipip) on one
// without a tunnel, Cilium's (cilium, cilium-kpr) on any datapath but
// cilium, Calico's (calico-*) on any but Calico's, and every CNI's on a datapath whose pods have no host-side
// device (host, macvlan, ipvlan), as NodeOf refuses them once built.
// Everything else fits, also the variants other implementations build.
func TestDatapathNodeFits(t *testing.T) {
	dps := catalog.All()
	for _, o := range catalog.Variants() {
		d, err := catalog.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		dps = append(dps, d)
	}
	for _, d := range dps {
		n, err := netfilter.DatapathNode(d)
		peerless := datapath.WhyNoPodPeers(d) != ""
		if (err != nil) != peerless {
			t.Errorf("%s: DatapathNode = %v, want refused %v", d.Name(), err, peerless)
			continue
		}
		if peerless {
			if !strings.Contains(err.Error(), "host-side device") {
				t.Errorf("%s: %v", d.Name(), err)
			}
			continue
		}
		if n.Bridge != d.PodBridge() || n.Tunnel != d.Tunnel() {
			t.Errorf("%s: node bridge %q tunnel %q, datapath says %q and %q", d.Name(), n.Bridge, n.Tunnel, d.PodBridge(), d.Tunnel())
		}
		for _, cni := range netfilter.Names() {
			g, err := netfilter.Lookup(cni)
			if err != nil {
				t.Fatal(err)
			}
			fits := (d.PodBridge() != "" || cni != "weave" && cni != "kube-router") &&
				(d.Tunnel() != "" || !strings.HasSuffix(cni, "-ipip")) &&
				(d.Name() == "cilium" || !strings.HasPrefix(cni, "cilium")) &&
				(strings.HasPrefix(d.Name(), "calico-") || !strings.HasPrefix(cni, "calico-"))
			if err := g.Fits(n); (err == nil) != fits {
				t.Errorf("%s's rules on %s: Fits = %v, want fits %v", cni, d.Name(), err, fits)
			}
		}
	}
}
