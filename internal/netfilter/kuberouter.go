package netfilter

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// KubeRouter writes what kube-router (--run-router --run-firewall
// --run-service-proxy, its DaemonSet's default) installs in iptables
// with no NetworkPolicy, modelled on cloudnativelabs/kube-router v2.11.1
// (the latest release; the same rules since v2.11.0, where the tail
// chain's accept took its comment "accept netpol-ok"):
//
//   - pkg/controllers/netpol/npc_iptables.go: ensureTopLevelChains
//     (INPUT/FORWARD/OUTPUT -> KUBE-ROUTER-*, inserted first, with the
//     rule's UUID in its comment; KUBE-ROUTER-INPUT's returns for the
//     Service range and node ports), ensureCommonPolicyChain
//     (KUBE-NWPLCY-COMMON: conntrack and ICMP), ensureDefaultNetworkPolicyChain
//     (KUBE-NWPLCY-DEFAULT marks), ensureExplicitAccept and
//     ensureTailChainPosition; populateDefaultTailChain
//     (KUBE-NWPLCY-TAIL: with --netpol-default-deny off, the default,
//     one rule accepting what a policy marked 0x20000);
//   - pkg/controllers/routing/network_routes_controller.go: FORWARD
//     accepts in and out of kube-bridge and out of the node's NIC;
//   - pkg/controllers/routing/pod_egress.go: pod egress masquerade in
//     nat POSTROUTING, --random-fully where iptables has it (1.6.2 on).
//
// Without a policy no pod has a KUBE-POD-FW-* chain. The service proxy
// is IPVS, KubeRouterProxy (with its own sets and rules), installed when
// the entry asks for it. The netpol ipsets are written as CIDRs: pod subnets as the cluster
// CIDR, node addresses as the node IP. Service and node-port ranges are
// kube-router's defaults (10.96.0.0/12 and 30000:32767).
func KubeRouter(n Node) (*Ruleset, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	rs := New()
	const (
		in, fwd, out  = "KUBE-ROUTER-INPUT", "KUBE-ROUTER-FORWARD", "KUBE-ROUTER-OUTPUT"
		common, deflt = "KUBE-NWPLCY-COMMON", "KUBE-NWPLCY-DEFAULT"
		tail          = "KUBE-NWPLCY-TAIL"
		serviceRange  = "10.96.0.0/12"
		nodePorts     = "30000:32767"
	)
	br := n.dev("kube-bridge", n.Bridge)
	rs.Chain("filter", in, fwd, out, common, deflt, tail)
	// ensureRuleAtPosition inserts the hooks at position 1 and moves
	// them back there on every sync: they come before the routing
	// controller's FORWARD rules and kube-proxy's hooks.
	for _, h := range []struct{ builtin, chain string }{{"INPUT", in}, {"FORWARD", fwd}, {"OUTPUT", out}} {
		rs.Insert("filter", h.builtin, "%s -j %s", uuidComment(h.builtin, nil, "kube-router netpol", "-j", h.chain), h.chain)
	}
	rs.Append("filter", in, "%s -d %s -j RETURN", uuidComment(in, nil, "allow traffic to primary/secondary cluster IP range", "-d", serviceRange, "-j", "RETURN"), serviceRange)
	for _, proto := range []string{"tcp", "udp", "sctp"} {
		what := "allow LOCAL " + strings.ToUpper(proto) + " traffic to node ports"
		rs.Append("filter", in, "-p %s %s -m addrtype --dst-type LOCAL -m multiport --dports %s -j RETURN", proto,
			uuidComment(in, []string{"-p", proto}, what, "-m", "addrtype", "--dst-type", "LOCAL", "-m", "multiport", "--dports", nodePorts, "-j", "RETURN"), nodePorts)
	}
	for _, c := range []string{in, fwd, out} {
		rs.Append("filter", c, "%s -j %s", comment("rule to explicitly handle traffic for network policies ACCEPT/REJECT decision"), tail)
		rs.Append("filter", c, "%s -m mark --mark 0x20000/0x20000 -j ACCEPT", comment("rule to explicitly ACCEPT traffic that comply to network policies"))
	}
	rs.Append("filter", common, "%s -m conntrack --ctstate INVALID -j DROP", comment("rule to drop invalid state for pod"))
	rs.Append("filter", common, "%s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", comment("rule for stateful firewall for pod"))
	for _, icmp := range []struct{ typ, what string }{
		{"echo-request", "allow icmp echo requests"},
		{"destination-unreachable", "allow icmp destination unreachable messages"},
		{"time-exceeded", "allow icmp time exceeded messages"},
	} {
		rs.Append("filter", common, "%s -p icmp --icmp-type %s -j ACCEPT", comment(icmp.what), icmp.typ)
	}
	rs.Append("filter", deflt, "%s -j MARK --set-xmark 0x10000/0x10000", comment("rule to mark traffic matching a network policy"))
	// populateDefaultTailChain (pkg/controllers/netpol/npc_iptables.go:619-637
	// in v2.11.1): the accept alone unless --netpol-default-deny.
	rs.Append("filter", tail, "%s -m mark --mark 0x20000/0x20000 -j ACCEPT", comment("accept netpol-ok"))

	// enableForwarding inserts each at position 1 in turn (from pods,
	// to pods, node port), so the last inserted sits first; all after
	// the netpol hook, which is moved back to the top.
	rs.Insert("filter", "FORWARD", "%s -o %s -j ACCEPT", comment("allow outbound node port traffic on node interface with which node ip is associated"), n.dev("eth1", n.Underlay))
	rs.Insert("filter", "FORWARD", "%s -o %s -j ACCEPT", comment("allow inbound traffic to pods"), br)
	rs.Insert("filter", "FORWARD", "%s -i %s -j ACCEPT", comment("allow outbound traffic from pods"), br)

	cluster := n.ClusterCIDR.String()
	nodes := "127.0.0.1-127.0.0.1"
	if n.NodeIP != nil {
		nodes = n.NodeIP.String() + "-" + n.NodeIP.String()
	}
	// pod_egress.go appends it (AppendUnique): after kube-proxy's
	// KUBE-POSTROUTING. The two negated sets of podEgressArgs4 cannot both be -d: the node
	// addresses become an iprange match. createPodEgressRule adds
	// --random-fully when iptables has it (HasRandomFully), as every
	// iptables a node runs now does.
	rs.Append("nat", "POSTROUTING", "-s %s ! -d %s -m iprange ! --dst-range %s -j MASQUERADE --random-fully", cluster, cluster, nodes)
	return rs, nil
}

// uuidComment is kube-router's positioned-rule comment: the text, " - ",
// and the first 16 base32 characters of sha256(chain + rule spec
// joined without spaces), as addUUIDForRuleSpec computes it; the spec is
// before, the comment match, then rest.
func uuidComment(chain string, before []string, text string, rest ...string) string {
	spec := append(append(append([]string{}, before...), "-m", "comment", "--comment", text), rest...)
	h := sha256.Sum256([]byte(chain + strings.Join(spec, "")))
	return comment(text + " - " + base32.StdEncoding.EncodeToString(h[:])[:16])
}
