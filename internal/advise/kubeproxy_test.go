package advise

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// netfilter-rules proposes what the node can take: kube-proxy's
// nftables mode only on a kernel of 5.13 or later (kube-proxy refuses it
// before), ipvs marked deprecated (KEP-5495), never the mode the node
// already runs in; a node already in nftables mode is no candidate.
func TestNetfilterRulesByNode(t *testing.T) {
	rs, err := Lookup("netfilter-rules")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(kernel, mode string) Result {
		in := load(t, "calico-vxlan-jumbo")
		in.Kernel, in.Netfilter.KubeProxy = kernel, mode
		return Evaluate(rs[0], in)
	}
	got := eval("6.8.0-45-generic", inspect.KubeProxyIptables)
	to := got.Knobs[0].Params["to"]
	if got.Status != Candidate || !strings.HasPrefix(to, "kube-proxy in nftables mode (Kubernetes >= 1.31); or IPVS mode (deprecated since Kubernetes 1.35, KEP-5495); or an eBPF") ||
		!strings.Contains(got.Permanent[0].Text, "\nmode: \"nftables\"") || got.Knobs[0].Params["kube_proxy"] != "iptables mode" {
		t.Errorf("kernel 6.8, iptables mode: %s %q\n%s", got.Status, got.Knobs, got.Permanent[0].Text)
	}
	got = eval("5.10.0-28-amd64", inspect.KubeProxyIptables)
	to = got.Knobs[0].Params["to"]
	if !strings.HasPrefix(to, "kube-proxy in nftables mode once the kernel is 5.13 or later (this node: 5.10.0-28-amd64;") ||
		strings.Contains(got.Permanent[0].Text, "\nmode: \"nftables\"") || !strings.Contains(got.Permanent[0].Text, "older than 5.13") {
		t.Errorf("kernel 5.10: %q\n%s", to, got.Permanent[0].Text)
	}
	got = eval("6.1.0", inspect.KubeProxyIPVS)
	if to := got.Knobs[0].Params["to"]; got.Status != Candidate || strings.Contains(to, "IPVS") || !strings.Contains(to, "nftables") {
		t.Errorf("ipvs mode: %s %q", got.Status, to)
	}
	if got = eval("6.8.0", inspect.KubeProxyNftables); got.Status != NotApplicable {
		t.Errorf("nftables mode: %s %v, want not applicable", got.Status, got.Why)
	}
}

func TestParseKernel(t *testing.T) {
	for rel, want := range map[string]int{"6.8.0-45-generic": 608, "5.13.0": 513, "5.4.0-1103-aws": 504, "6.12.9+bpo-amd64": 612} {
		if got, err := parseKernel(rel); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", rel, got, err, want)
		}
	}
	if _, err := parseKernel("weird"); err == nil {
		t.Error("a release without major.minor parsed")
	}
}
