package policy_test

import (
	"net"
	"reflect"
	"testing"

	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/policy"
)

// The policy knob's FORWARD hooks and cali-FORWARD are the ones
// internal/netfilter writes for a Calico node (its Calico replaces this
// package's cali-FORWARD with its own rendering of
// StaticFilterForwardChains): the two must not drift apart.
func TestForwardMatchesNetfilter(t *testing.T) {
	_, pods, _ := net.ParseCIDR("10.244.1.0/24")
	_, cluster, _ := net.ParseCIDR("10.244.0.0/16")
	nf, err := netfilter.Generate("calico-wp-xsub", netfilter.Node{PodCIDR: pods, ClusterCIDR: cluster,
		Pods: []netfilter.Pod{{Iface: "cali0a", IP: net.IPv4(10, 244, 1, 2)}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Calico(policy.With, []policy.Endpoint{{Iface: "cali0a", IP: net.IPv4(10, 244, 1, 2)}}, []*net.IPNet{cluster}, true)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := netfilter.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, chain := range []string{"FORWARD", "cali-FORWARD", "cali-from-wl-dispatch", "cali-tw-cali0a", "cali-pi-_cnibench-allow-pods"} {
		if got, want := ours.ChainRules("filter", chain), nf.ChainRules("filter", chain); !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n policy     %q\n netfilter  %q", chain, got, want)
		}
	}
	for _, r := range ours.Rules() {
		if r.Chain == "FORWARD" && r.Spec == "-j cali-FORWARD" && !r.Top {
			t.Error("the jump to cali-FORWARD is appended; Felix inserts it at the top")
		}
	}
	if err := ours.Validate(); err != nil {
		t.Error(err)
	}
}
