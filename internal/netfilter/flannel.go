package netfilter

// Flannel writes what flanneld installs with --ip-masq (the default of
// kube-flannel.yml), modelled on flannel-io/flannel
// pkg/trafficmngr/iptables/iptables.go:
//
//   - forwardRules (SetupAndEnsureForwardRules): filter FORWARD jumps to
//     FLANNEL-FWD, which accepts anything from or to the flannel network
//     (Docker and some distributions set FORWARD's policy to DROP);
//   - masqRules (SetupAndEnsureMasqRules): nat POSTROUTING jumps to
//     FLANNEL-POSTRTG, which leaves kube-proxy-marked, pod-to-pod and
//     host-to-local-pod traffic alone and masquerades pods leaving the
//     cluster (and the host entering it).
//
// Both hooks are appended ("-A" in forwardRules and masqRules; flanneld
// re-adds a missing rule set at the end), so on a node they sit after
// kube-proxy's, which kube-proxy prepends.
//
// --random-fully is written as flanneld writes it when iptables supports
// it (every iptables since 1.6.2). The CNI plugin flannel delegates to
// (bridge, with ipMasq off because flanneld masquerades) adds no rules.
func Flannel(n Node) (*Ruleset, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	rs := New()
	pod, cluster := n.PodCIDR.String(), n.ClusterCIDR.String()
	fwd := comment("flanneld forward")
	rs.Chain("filter", "FLANNEL-FWD")
	rs.Append("filter", "FORWARD", "%s -j FLANNEL-FWD", fwd)
	rs.Append("filter", "FLANNEL-FWD", "-s %s %s -j ACCEPT", cluster, fwd)
	rs.Append("filter", "FLANNEL-FWD", "-d %s %s -j ACCEPT", cluster, fwd)

	masq := comment("flanneld masq")
	rs.Chain("nat", "FLANNEL-POSTRTG")
	rs.Append("nat", "POSTROUTING", "%s -j FLANNEL-POSTRTG", masq)
	// kube-proxy's mark (0x4000): never NAT a Service's traffic twice.
	rs.Append("nat", "FLANNEL-POSTRTG", "-m mark --mark 0x4000/0x4000 %s -j RETURN", masq)
	rs.Append("nat", "FLANNEL-POSTRTG", "-s %s -d %s %s -j RETURN", pod, cluster, masq)
	rs.Append("nat", "FLANNEL-POSTRTG", "-s %s -d %s %s -j RETURN", cluster, pod, masq)
	rs.Append("nat", "FLANNEL-POSTRTG", "! -s %s -d %s %s -j RETURN", cluster, pod, masq)
	rs.Append("nat", "FLANNEL-POSTRTG", "-s %s ! -d 224.0.0.0/4 %s -j MASQUERADE --random-fully", cluster, masq)
	rs.Append("nat", "FLANNEL-POSTRTG", "! -s %s -d %s %s -j MASQUERADE --random-fully", cluster, cluster, masq)
	return rs, nil
}
