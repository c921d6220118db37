package inspect

import (
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
)

// Proxy modes kube-proxy runs in, as its tables tell them.
const (
	KubeProxyIptables = "iptables"
	KubeProxyIPVS     = "ipvs"
	KubeProxyNftables = "nftables"
)

// kubeProxyMode tells kube-proxy's mode from what it leaves on the node
// (kubernetes pkg/proxy): in nftables mode its own table "kube-proxy"
// (families ip and ip6); in ipvs mode the dummy device kube-ipvs0 that
// holds the Service addresses, beside iptables chains of its own; in
// iptables mode the chain KUBE-SERVICES of the nat table (seen through
// iptables-save, or as nft's view of iptables-nft's "ip nat" table).
// Empty where none of these is seen: no kube-proxy (an eBPF service
// datapath replaces it), or rulesets that could not be read.
func kubeProxyMode(ipt *iptables.Ruleset, nft *nftables.Ruleset, links []string) string {
	if nft != nil && slices.ContainsFunc(nft.Tables, func(t string) bool { return strings.HasSuffix(t, "/kube-proxy") }) {
		return KubeProxyNftables
	}
	if slices.Contains(links, "kube-ipvs0") {
		return KubeProxyIPVS
	}
	if ipt != nil {
		if _, ok := ipt.Chains["nat/KUBE-SERVICES"]; ok {
			return KubeProxyIptables
		}
	}
	if nft != nil && slices.ContainsFunc(nft.Chains, func(c string) bool { return strings.HasSuffix(c, "/nat/KUBE-SERVICES") }) {
		return KubeProxyIptables
	}
	return ""
}
