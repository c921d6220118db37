package knob

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// TestNetfilterNeedsWhatItDoes: what the netfilter knob needs was probed
// only as programs found (iptables-restore, nft): iptables-save, which
// snapshots every node's tables, was never looked for, and neither the
// rules, the nftables table, nor an IPVS proxy's dummy device and ipsets
// were tried, so a kernel without them passed preflight and the run
// failed at its first replica count. Each mode now needs what it does,
// tried in a scratch namespace.
func TestNetfilterNeedsWhatItDoes(t *testing.T) {
	common := []string{probe.ToolIptablesRestore, probe.ToolIptablesSave, probe.Iptables}
	for mode, extra := range map[string][]string{
		"":                        nil,
		study.KubeProxyIptables:   nil,
		study.KubeProxyNone:       nil,
		study.KubeProxyNFT:        {probe.ToolNft, probe.NFTables},
		study.KubeProxyIPVS:       {probe.IPVS, probe.Dummy, probe.IPSet},
		study.KubeProxyKubeRouter: {probe.IPVS, probe.Dummy, probe.IPSet},
		study.KubeProxyCilium:     {probe.SocketLB},
	} {
		got := netfilterEntry.Needs(&Target{Datapath: study.Datapath{Netfilter: &study.Netfilter{CNI: "calico", KubeProxy: mode}}})
		for _, want := range append(slices.Clone(common), extra...) {
			if !slices.Contains(got, want) {
				t.Errorf("kubeProxy %q needs %v: no %s", mode, got, want)
			}
		}
	}
	for _, f := range []string{probe.Iptables, probe.NFTables, probe.Dummy, probe.IPSet} {
		if !probe.IsKernel(f) {
			t.Errorf("%s is not a kernel feature: preflight would not probe it", f)
		}
	}
}

// TestIPSetProbeCoversTheProxies: probe.IPSet creates a set of each type
// the IPVS proxies create; a type added to a proxy must be tried too.
func TestIPSetProbeCoversTheProxies(t *testing.T) {
	for _, p := range []netfilter.Proxy{netfilter.ProxyKubeProxy, netfilter.ProxyKubeRouter} {
		l, err := netfilter.Layout(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Sets {
			if !slices.Contains(probe.IPSetTypes, s.Type) {
				t.Errorf("%s's set %s is of type %s, which probe.IPSet does not try (probe.IPSetTypes %v)", p, s.Name, s.Type, probe.IPSetTypes)
			}
		}
	}
}
