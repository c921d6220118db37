package netfilter

import (
	"net"
	"reflect"
	"strings"
	"testing"
)

// hookTargets is what a built-in chain jumps to once the rule sets are
// restored into empty chains in turn.
func hookTargets(t *testing.T, chain string, sets ...*Ruleset) []string {
	t.Helper()
	chains := map[string][]string{}
	for _, rs := range sets {
		restoreInto(t, chains, rs.Bytes())
	}
	var out []string
	for _, spec := range chains[chain] {
		out = append(out, target(spec))
	}
	return out
}

// kube-proxy's IPVS mode prepends its jumps in iptablesJumpChain's order
// (pkg/proxy/ipvs/proxier.go:1766-1771), so a node holds them in
// reverse; the kubelet's KUBE-FIREWALL, prepended before kube-proxy
// started, is below them.
func TestIPVSHookOrder(t *testing.T) {
	st, err := KubeProxyIPVS(cidr(t, "10.244.0.0/16"), cidr(t, "10.244.1.0/24"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cni, err := Generate("flannel", testNode(t))
	if err != nil {
		t.Fatal(err)
	}
	for chain, want := range map[string][]string{
		"filter/INPUT":   {"KUBE-IPVS-FILTER", "KUBE-PROXY-FIREWALL", "KUBE-NODE-PORT", "KUBE-FIREWALL"},
		"filter/FORWARD": {"KUBE-PROXY-FIREWALL", "KUBE-FORWARD", "FLANNEL-FWD"},
		"filter/OUTPUT":  {"KUBE-IPVS-OUT-FILTER", "KUBE-FIREWALL"},
	} {
		if got := hookTargets(t, chain, st.Rules, cni); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", chain, got, want)
		}
	}
}

// The kubelet's KUBE-FIREWALL is on every node, once, whatever the
// proxy: with kube-proxy's iptables mode (which writes a copy the
// kubelet's makes a no-op), IPVS, kube-router's proxy and none
// (nftables, Cilium's replacement), and for every CNI.
func TestKubeletFirewallOnEveryNode(t *testing.T) {
	kp, err := KubeProxy(cidr(t, "10.244.0.0/16"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ipvs, err := KubeProxyIPVS(cidr(t, "10.244.0.0/16"), cidr(t, "10.244.1.0/24"), nil)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := KubeRouterProxy(net.ParseIP("198.18.0.2"), cidr(t, "10.244.1.0/24"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, cni := range Names() {
		rs, err := Generate(cni, testNode(t))
		if err != nil {
			t.Fatal(err)
		}
		for proxy, p := range map[string]*Ruleset{"iptables": kp, "ipvs": ipvs.Rules, "kube-router": kr.Rules, "none": New()} {
			for _, chain := range []string{"filter/INPUT", "filter/OUTPUT"} {
				n := 0
				for _, tg := range hookTargets(t, chain, p, rs) {
					if tg == "KUBE-FIREWALL" {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%s with %s: %s jumps to KUBE-FIREWALL %d times, want once", cni, proxy, chain, n)
				}
			}
		}
		if r := rs.ChainRules("filter", "KUBE-FIREWALL"); len(r) != 1 || !strings.Contains(r[0], "-d 127.0.0.0/8") || !strings.HasSuffix(r[0], "-j DROP") {
			t.Errorf("%s: KUBE-FIREWALL holds %v", cni, r)
		}
	}
}
