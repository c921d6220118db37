package netfilter

import "net"

// Cilium writes the few chains the Cilium agent installs beside its eBPF
// datapath, modelled on cilium/cilium pkg/datapath/iptables/iptables.go
// (IptablesManager.installRules: the feeder rules "cilium-feeder:
// CILIUM_*" into the built-in chains, the proxy marks' ACCEPT and
// NOTRACK rules, CILIUM_FORWARD's accepts for cilium_host, cilium_net
// and lxc+, and installMasqueradeRules) and on the expected rule set in
// its tests (pkg/datapath/iptables testdata). No L7 proxy port is open,
// so no TPROXY rules. One configuration throughout, Cilium's default:
// tunnel mode (VXLAN), no endpoint routes, cluster-pool IPAM.
//
// The feeders are inserted at the top of their built-in chains
// (pkg/datapath/iptables/custom_chain.go doInstallFeeder: "-I" with
// --prepend-iptables-chains, on by default), before kube-proxy's hooks.
//
// kpr is the kube-proxy replacement: with it Cilium runs with BPF
// masquerading too (the usual pairing), so installMasqueradeRules writes
// nothing and CILIUM_POST_nat stays empty; without it the iptables
// masquerade rules are written (and kube-proxy's rules belong beside
// them: see KubeProxy).
func Cilium(n Node, kpr bool) (*Ruleset, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	rs := New()
	feed := func(table, hook, chain string) {
		rs.Chain(table, chain)
		rs.Insert(table, hook, "%s -j %s", comment("cilium-feeder: "+chain), chain)
	}
	feed("filter", "INPUT", "CILIUM_INPUT")
	feed("filter", "FORWARD", "CILIUM_FORWARD")
	feed("filter", "OUTPUT", "CILIUM_OUTPUT")
	feed("raw", "PREROUTING", "CILIUM_PRE_raw")
	feed("raw", "OUTPUT", "CILIUM_OUTPUT_raw")
	feed("mangle", "PREROUTING", "CILIUM_PRE_mangle")
	feed("mangle", "POSTROUTING", "CILIUM_POST_mangle")
	feed("nat", "PREROUTING", "CILIUM_PRE_nat")
	feed("nat", "OUTPUT", "CILIUM_OUTPUT_nat")
	feed("nat", "POSTROUTING", "CILIUM_POST_nat")

	rs.Append("filter", "CILIUM_INPUT", "-m mark --mark 0x200/0xf00 %s -j ACCEPT", comment("cilium: ACCEPT for proxy traffic"))
	rs.Append("filter", "CILIUM_OUTPUT", "-m mark --mark 0xa00/0xfffffeff %s -j ACCEPT", comment("cilium: ACCEPT for proxy return traffic"))
	rs.Append("filter", "CILIUM_OUTPUT", "-m mark --mark 0x800/0xe00 %s -j ACCEPT", comment("cilium: ACCEPT for l7 proxy upstream traffic"))
	rs.Append("filter", "CILIUM_OUTPUT", "-m mark ! --mark 0xe00/0xf00 -m mark ! --mark 0xd00/0xf00 -m mark ! --mark 0x400/0xf00 -m mark ! --mark 0xa00/0xe00 -m mark ! --mark 0x800/0xe00 -m mark ! --mark 0xf00/0xf00 %s -j MARK --set-xmark 0xc00/0xf00",
		comment("cilium: host->any mark as from host"))
	// installForwardChainRulesIpX (cilium/cilium v1.17.4
	// pkg/datapath/iptables/iptables.go:1102-1173) on a default node:
	// without endpoint routes (or ENI/Alibaba IPAM) getDeliveryInterface
	// (:1069-1085) gives cilium_host itself, so the separate -o/-i lxc+
	// pair of the endpoint-routes variant is not written; four rules.
	for _, r := range []struct{ dir, dev, what string }{
		{"-o", "cilium_host", "any->cluster on cilium_host forward accept"},
		{"-i", "cilium_host", "cluster->any on cilium_host forward accept (nodeport)"},
		{"-i", "lxc+", "cluster->any on lxc+ forward accept"},
		{"-i", "cilium_net", "cluster->any on cilium_net forward accept (nodeport)"},
	} {
		rs.Append("filter", "CILIUM_FORWARD", "%s %s %s -j ACCEPT", r.dir, r.dev, comment("cilium: "+r.what))
	}

	rs.Append("raw", "CILIUM_PRE_raw", "-m mark --mark 0x200/0xf00 %s -j CT --notrack", comment("cilium: NOTRACK for proxy traffic"))
	for _, dev := range []string{"lxc+", "cilium_host"} {
		rs.Append("raw", "CILIUM_OUTPUT_raw", "-o %s -m mark --mark 0xa00/0xfffffeff %s -j CT --notrack", dev, comment("cilium: NOTRACK for proxy return traffic"))
	}
	for _, dev := range []string{"lxc+", "cilium_host"} {
		rs.Append("raw", "CILIUM_OUTPUT_raw", "-o %s -m mark --mark 0x800/0xe00 %s -j CT --notrack", dev, comment("cilium: NOTRACK for L7 proxy upstream traffic"))
	}
	rs.Append("mangle", "CILIUM_PRE_mangle", "-m socket --transparent -m mark ! --mark 0xe00/0xf00 -m mark ! --mark 0x800/0xf00 %s -j MARK --set-xmark 0x200/0xffffffff",
		comment("cilium: any->pod redirect proxied traffic to host proxy"))

	if !kpr {
		pod := n.PodCIDR.String()
		// cilium_host's address: the router IP Cilium takes from the
		// node's pod CIDR (the first one here).
		host := routerIP(n.PodCIDR)
		// In tunnel mode, the default, no native-routing CIDR is set and
		// the masquerade excludes the node's own pod CIDR, not the
		// cluster's (remoteSNATDstAddrExclusionCIDR, iptables.go:1584-1591;
		// allEgressMasqueradeCmds, :1806-1828): pod traffic to other
		// nodes' pods is spared because it leaves through the tunnel
		// (! -o cilium_+), not by its destination.
		rs.Append("nat", "CILIUM_POST_nat", "-s %s ! -d %s ! -o cilium_+ %s -j MASQUERADE", pod, pod, comment("cilium masquerade non-cluster"))
		rs.Append("nat", "CILIUM_POST_nat", "-m mark --mark 0xa00/0xe00 %s -j ACCEPT", comment("exclude proxy return traffic from masquerade"))
		rs.Append("nat", "CILIUM_POST_nat", "! -s %s ! -d %s -o cilium_host %s -j SNAT --to-source %s", pod, pod, comment("cilium host->cluster masquerade"), host)
		rs.Append("nat", "CILIUM_POST_nat", "-s 127.0.0.1/32 -o cilium_host %s -j SNAT --to-source %s", comment("cilium host->cluster from 127.0.0.1 masquerade"), host)
		rs.Append("nat", "CILIUM_POST_nat", "-o cilium_host -m mark --mark 0xf00/0xf00 -m conntrack --ctstate DNAT %s -j SNAT --to-source %s",
			comment("hairpin traffic that originated from a local pod"), host)
	}
	return rs, nil
}

// ciliumDevices are the devices of Cilium's own that its rules match
// (Generator.Devices): CILIUM_FORWARD's accepts and CILIUM_OUTPUT_raw's
// NOTRACKs name cilium_host, cilium_net and the pods' lxc+ veths, and
// the masquerade (! -o cilium_+, without the kube-proxy replacement)
// spares what leaves by Cilium's devices alone. On another datapath the
// accepts never match, its pods' forwarded packets walk on through
// FORWARD where the cilium datapath's never enter it (its BPF redirects
// them past the hook: TestTableIIIPaths never meets CILIUM_FORWARD), and
// pod traffic to other nodes is masqueraded. Renaming the devices would
// not make that a Cilium node's path, so the rules are refused there
// (Generator.FitsDevices).
var ciliumDevices = []string{"cilium_host", "cilium_net", "lxc+"}

// routerIP is the first address of a subnet.
func routerIP(n *net.IPNet) net.IP {
	ip := append(net.IP(nil), n.IP.To4()...)
	ip[3]++
	return ip
}
