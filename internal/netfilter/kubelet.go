package netfilter

// Kubelet is the kubelet's own iptables state, written on every node
// whatever the Service proxy and the CNI (kubernetes/kubernetes v1.33.1
// pkg/kubelet/kubelet.go:1808-1809, makeIPTablesUtilChains, true by
// default; pkg/kubelet/kubelet_network_linux.go:64-113,
// syncIPTablesRules): the empty hint chain KUBE-IPTABLES-HINT in mangle
// (:67), KUBE-FIREWALL jumped to from the top of filter INPUT and OUTPUT
// (:81-93, EnsureRule(Prepend)) holding the drop of connections to
// 127.0.0.0/8 from elsewhere (:101-107), and the canary chain
// KUBE-KUBELET-CANARY in mangle, nat and filter (:50-52, the iptables
// Monitor: pkg/util/iptables/iptables.go:598-607, EnsureChain per table).
//
// The kubelet starts before kube-proxy and the CNI daemon, so its jumps
// are prepended to empty chains and everything those prepend later goes
// above them; what they append goes below. Generate puts these rules
// first in every CNI's rule set, appended, and knob netfilter applies
// the proxy's rules before the CNI's: the jumps land below the proxy's
// hooks and the CNI's inserted ones, above the CNI's appended ones, as
// on a node. kube-proxy's iptables mode writes an identical copy of the
// chain, rule and jumps (pkg/proxy/iptables/proxier.go:397-400, 846-858,
// 929-950) that changes nothing where the kubelet's exist, so KubeProxy
// leaves them here; its IPVS and nftables modes, kube-router and
// Cilium write none, and their nodes still have the kubelet's.
func Kubelet() *Ruleset {
	rs := New()
	rs.Chain("mangle", "KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY")
	rs.Chain("nat", "KUBE-KUBELET-CANARY")
	rs.Chain("filter", "KUBE-FIREWALL", "KUBE-KUBELET-CANARY")
	rs.Append("filter", "INPUT", "-j KUBE-FIREWALL")
	rs.Append("filter", "OUTPUT", "-j KUBE-FIREWALL")
	rs.Append("filter", "KUBE-FIREWALL", "! -s 127.0.0.0/8 -d 127.0.0.0/8 %s -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
		comment("block incoming localnet connections"))
	return rs
}
