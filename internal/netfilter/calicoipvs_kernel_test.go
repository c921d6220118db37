package netfilter_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netfilter"
)

// Felix's rule sets with IPVS support (kube-proxy in IPVS mode) pass
// iptables-restore --test and install in a fresh node namespace, with
// every chain they declare, the per-endpoint cali-sm- ones included.
func TestInstallCalicoIPVS(t *testing.T) {
	requireIptables(t)
	run := kerneltest.RunID()
	j := kerneltest.Journal(t, run)
	n := netfilter.Node{PodCIDR: cidr("10.244.1.0/24"), ClusterCIDR: cidr("10.244.0.0/16"), NodeIP: net.ParseIP("198.18.0.2"),
		Pods: []netfilter.Pod{{Iface: "cali0a", IP: net.ParseIP("10.244.1.2")}, {Iface: "cali1b", IP: net.ParseIP("10.244.1.3")},
			{Iface: "cali1c", IP: net.ParseIP("10.244.1.4")}},
		KubeIPVS: true}
	ctx := context.Background()
	for i, name := range []string{"calico-wp-ipip", "calico-np-ipip", "calico-wp-xsub", "calico-np-xsub"} {
		rs, err := netfilter.Generate(name, n)
		if err != nil {
			t.Fatal(err)
		}
		r := netfilter.InNetns(scratch(t, j, run, fmt.Sprintf("ipvs%d", i)))
		if err := netfilter.Test(ctx, r, rs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := netfilter.Apply(ctx, r, rs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		saved, err := netfilter.Save(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range append(rs.Chains(), "filter/cali-sm-cali1c", "filter/cali-set-endpoint-mark-1") {
			if _, ok := saved.Chains[c]; !ok {
				t.Errorf("%s: chain %s not installed", name, c)
			}
		}
		if _, rules := rs.Count(); len(saved.Rules) < rules {
			t.Errorf("%s: iptables holds %d rules, the rule set has %d", name, len(saved.Rules), rules)
		}
	}
}
