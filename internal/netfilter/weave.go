package netfilter

// Weave writes what Weave Net installs on a Kubernetes node, where the
// network policy controller (weave-npc) runs beside the router and
// `weave expose` gives the host an address on the weave network:
//
//   - weaveworks/weave net/bridge.go (EnsureBridge's iptables part,
//     ensureRulesAtTop): the control port guard in INPUT, INPUT and
//     FORWARD steering into weave-npc's chains, the NFLOG/DROP of
//     unmatched ingress, forwarding out of and back into the bridge, and
//     nat POSTROUTING -> WEAVE with the NoMasqLocal return;
//   - net/expose.go (exposeNAT): WEAVE's masquerade rules for the
//     allocation range;
//   - prog/weave-npc/main.go (createBaseRules) and npc/namespace.go: the
//     WEAVE-NPC ingress chain and the WEAVE-NPC-EGRESS chain, and each
//     namespace's default-allow rule (no NetworkPolicy: every namespace
//     is non-isolated).
//
// Hooks go where ConfigureIPTables (net/bridge.go) puts them: the
// FORWARD rules with ensureRulesAtTop (inserted at positions 1..n, in
// order, "NOTE: this must go before '-j KUBE-FORWARD'"), the INPUT rules
// and nat POSTROUTING's -j WEAVE with AppendUnique, at the end.
//
// The namespaces' ipsets (weave-<hash>, weaver-no-masq-local) are
// written as the node's pod CIDR; the allocation range is the cluster
// CIDR. The bridge defaults to "weave", the router's port to
// "vethwe-bridge".
func Weave(n Node) (*Ruleset, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	rs := New()
	br := n.dev("weave", n.Bridge)
	pod, cluster := n.PodCIDR.String(), n.ClusterCIDR.String()
	const (
		npc        = "WEAVE-NPC"
		egress     = "WEAVE-NPC-EGRESS"
		mark       = "0x40000/0x40000"
		bridgePort = "vethwe-bridge"
	)
	rs.Chain("filter", npc, "WEAVE-NPC-DEFAULT", "WEAVE-NPC-INGRESS", egress,
		"WEAVE-NPC-EGRESS-DEFAULT", "WEAVE-NPC-EGRESS-CUSTOM", "WEAVE-NPC-EGRESS-ACCEPT")
	rs.Append("filter", "INPUT", "-p tcp -d 127.0.0.1/32 --dport 6784 -m addrtype ! --src-type LOCAL -m conntrack ! --ctstate RELATED,ESTABLISHED %s -j DROP",
		comment("Block non-local access to Weave Net control port"))
	rs.Append("filter", "INPUT", "-i %s -j %s", br, egress)
	note := comment("NOTE: this must go before '-j KUBE-FORWARD'")
	rs.Insert("filter", "FORWARD", "-i %s %s -j %s", br, note, egress)
	rs.Insert("filter", "FORWARD", "-o %s %s -j %s", br, note, npc)
	rs.Insert("filter", "FORWARD", "-o %s -m state --state NEW -j NFLOG --nflog-group 86", br)
	rs.Insert("filter", "FORWARD", "-o %s -j DROP", br)
	rs.Insert("filter", "FORWARD", "-i %s ! -o %s -j ACCEPT", br, br)
	rs.Insert("filter", "FORWARD", "-o %s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", br)

	rs.Append("filter", npc, "-m state --state RELATED,ESTABLISHED -j ACCEPT")
	rs.Append("filter", npc, "-d 224.0.0.0/4 -j ACCEPT")
	rs.Append("filter", npc, "-m physdev --physdev-out %s --physdev-is-bridged -j ACCEPT", bridgePort)
	rs.Append("filter", npc, "-m state --state NEW -j WEAVE-NPC-DEFAULT")
	rs.Append("filter", npc, "-m state --state NEW -j WEAVE-NPC-INGRESS")
	rs.Append("filter", "WEAVE-NPC-DEFAULT", "-d %s %s -j ACCEPT", pod, comment("DefaultAllow ingress isolation for namespace: default"))

	rs.Append("filter", egress, "-m state --state RELATED,ESTABLISHED -j ACCEPT")
	rs.Append("filter", egress, "-m physdev --physdev-in %s --physdev-is-bridged -j RETURN", bridgePort)
	rs.Append("filter", egress, "-m addrtype --dst-type LOCAL -j RETURN")
	rs.Append("filter", egress, "-d 224.0.0.0/4 -j RETURN")
	rs.Append("filter", egress, "-m state --state NEW -j WEAVE-NPC-EGRESS-DEFAULT")
	rs.Append("filter", egress, "-m state --state NEW -m mark ! --mark %s -j WEAVE-NPC-EGRESS-CUSTOM", mark)
	rs.Append("filter", egress, "-m state --state NEW -m mark ! --mark %s -j NFLOG --nflog-group 86", mark)
	rs.Append("filter", egress, "-m mark ! --mark %s -j DROP", mark)
	egressDefault := comment("DefaultAllow egress isolation for namespace: default")
	rs.Append("filter", "WEAVE-NPC-EGRESS-DEFAULT", "-s %s %s -j WEAVE-NPC-EGRESS-ACCEPT", pod, egressDefault)
	rs.Append("filter", "WEAVE-NPC-EGRESS-DEFAULT", "-s %s %s -j RETURN", pod, egressDefault)
	rs.Append("filter", "WEAVE-NPC-EGRESS-ACCEPT", "-j MARK --set-xmark %s", mark)

	rs.Chain("nat", "WEAVE")
	rs.Append("nat", "POSTROUTING", "-j WEAVE")
	rs.Append("nat", "WEAVE", "-d %s %s -j RETURN", pod, comment("Prevent SNAT to locally running containers"))
	rs.Append("nat", "WEAVE", "-s %s -d 224.0.0.0/4 -j RETURN", cluster)
	rs.Append("nat", "WEAVE", "! -s %s -d %s -j MASQUERADE", cluster, cluster)
	rs.Append("nat", "WEAVE", "-s %s ! -d %s -j MASQUERADE", cluster, cluster)
	return rs, nil
}
