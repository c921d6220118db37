package netfilter_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestNodeOfNamesTheDatapathsDevices: the node the knob netfilter hands
// the generators names the datapath's own bridge and underlay, so
// {type: bridge, netfilter: {cni: kube-router}} (docs/netfilter.md's
// "Kube-router (bridge)" row) writes kube-router's FORWARD accepts for
// cni0, where its pods are, and not for a kube-bridge no packet crosses;
// a datapath without a bridge names none, and kube-router's rules do not
// fit it.
func TestNodeOfNamesTheDatapathsDevices(t *testing.T) {
	requireIptables(t)
	kr, err := netfilter.Lookup("kube-router")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ datapath, bridge string }{
		{"bridge", "cni0"}, {"kube-router", "kube-bridge"}, {"calico-routed", ""},
	} {
		t.Run(c.datapath, func(t *testing.T) {
			cl, pairs := workloadtest.Cluster(t, c.datapath, 1)
			n, err := netfilter.NodeOf(cl.Server(), []engine.Pod{pairs[0].Server})
			if err != nil {
				t.Fatal(err)
			}
			if n.Bridge != c.bridge || n.Underlay != cl.Server().Underlay().Name {
				t.Errorf("node bridge %q underlay %q, want %q and %q", n.Bridge, n.Underlay, c.bridge, cl.Server().Underlay().Name)
			}
			if err := kr.Fits(n); (err == nil) != (c.bridge != "") {
				t.Errorf("kube-router's rules on %s: Fits = %v", c.datapath, err)
			}
		})
	}
}
