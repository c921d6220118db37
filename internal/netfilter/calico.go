package netfilter

import (
	"fmt"
	"net"

	"github.com/cnibench/cnibench/internal/policy"
)

// Calico policy modes (seed 004's Calico-wp and Calico-np).
const (
	CalicoWithPolicy = policy.With
	CalicoNoPolicy   = policy.Without
)

// Felix's mark bits with its default IptablesMarkMask (0xffff0000), as
// Calico v3.29 allocates them (v3.29.7 felix/dataplane/driver.go:109-116:
// accept, pass, scratch0, scratch1): accept 0x10000, pass 0x20000,
// scratch0 0x40000 ("from workload"), scratch1 0x80000. From v3.30 a
// drop mark is allocated third (driver.go:115-124 in v3.30.0), which
// moves scratch0 to 0x80000 and widens every "all Calico marks" mask to
// 0x1f0000; the rules' shape and cost per packet are the same.
const (
	caliAccept   = "0x10000/0x10000"
	caliFromWL   = "0x40000/0x40000"
	caliAllMarks = "0x0/0xf0000"
)

// calicoDevices are the devices of Calico's own that Felix's rules match
// (Generator.Devices): cali-FORWARD dispatches by -i/-o cali+, cali-PREROUTING
// marks what comes from cali+, cali-INPUT sends it to cali-wl-to-host and
// cali-OUTPUT returns early for it (felix/rules/static.go, the workload
// interface prefix "cali"). A datapath whose pods' host-side veths are
// named otherwise (a bridge's veth+, a flannel node's) has no device the
// dispatch matches: every policy and endpoint chain is skipped, and the
// measured path is shorter than a Calico node's with nothing said. So the
// rules fit only Calico's datapaths (calico-routed, calico-ipip,
// calico-vxlan), whose pods' veths are cali+ (calicopod.VethPrefix).
var calicoDevices = []string{"cali+"}

// Calico writes Felix's iptables state as Calico v3.29 (v3.29.7, the
// last release before the marks above moved) writes it (iptables
// dataplane, no host endpoints, no BPF) for a node whose workloads are
// n.Pods, with the
// IP-in-IP overlay (ipip) or native routing ("xsub"). The per-endpoint
// chains, the dispatch chains and the profile or policy chains come from
// internal/policy (policy.Calico, mode CalicoWithPolicy or
// CalicoNoPolicy); the rest is modelled on projectcalico/calico
// felix/rules/static.go:
//
//   - raw: StaticRawPreroutingChain (clear marks, mark packets from cali+,
//     reverse-path check for workloads, host endpoints) and
//     StaticRawOutputChain;
//   - mangle: StaticManglePreroutingChain and StaticManglePostroutingChain;
//   - filter: StaticFilterForwardChains (cali-FORWARD replaces the short
//     one internal/policy writes) with StaticFilterForwardAppendRules at
//     the end of FORWARD, filterInputChain (IP-in-IP only from Calico
//     hosts), filterWorkloadToHostChain, filterOutputChain;
//   - nat: StaticNATPreroutingChains, StaticNATPostroutingChains (floating
//     IPs, cali-nat-outgoing from felix/rules/nat.go
//     makeNATOutgoingRuleIPTables, and the tunnel's source fix-up) and
//     StaticNATOutputChains.
//
// With n.KubeIPVS (kube-proxy in IPVS mode: kube-ipvs0 exists) Felix's
// IPVS support is on, and the rules and chains it adds are written too
// (calicoipvs.go), in Felix's positions.
//
// v3.31 also puts a DSCP rule at the head of mangle cali-POSTROUTING
// (StaticManglePostroutingChain: traffic from an endpoint with a DSCP
// annotation leaving the cluster, an ipset match every packet meets);
// v3.29 has none, and neither has this model.
//
// Hooks go where Felix puts them (felix/dataplane/linux/int_dataplane.go
// setUpIptablesNormal): the jumps to cali-PREROUTING, cali-OUTPUT,
// cali-INPUT, cali-FORWARD (raw, mangle, filter, nat) and
// cali-POSTROUTING (mangle) with InsertOrAppendRules, which inserts at
// the top with the default ChainInsertMode "insert" (felix/config
// config_params.go) and keeps them first (felix/iptables/table.go);
// StaticFilterForwardAppendRules (accept what policy marked, then set
// the mark) with AppendRules, at the end of FORWARD; and nat
// POSTROUTING's jump with AppendRules too ("We must go last", after
// kube-proxy's KUBE-POSTROUTING clears its mark).
//
// The host-endpoint dispatch chains exist and are empty, as on a node
// without HostEndpoints; the failsafe chains they would call are left
// out. Felix's ipsets (all-hosts-net, all-ipam-pools, masq-ipam-pools)
// are written as the CIDRs they hold: the hosts as n.NodeIP's /24 (the
// underlay) and the pools as n.ClusterCIDR. Felix's "cali:<hash>" rule
// comments are left out.
func Calico(n Node, mode string, ipip bool) (*Ruleset, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	eps := make([]policy.Endpoint, len(n.Pods))
	for i, p := range n.Pods {
		eps[i] = policy.Endpoint{Iface: p.Iface, IP: p.IP}
	}
	allow := n.AllowFrom
	if len(allow) == 0 {
		allow = []*net.IPNet{n.ClusterCIDR}
	}
	pol, err := policy.Calico(mode, eps, allow, false)
	if err != nil {
		return nil, err
	}
	rs, err := Parse(pol)
	if err != nil {
		return nil, fmt.Errorf("internal/policy output: %w", err)
	}
	hosts := ""
	if ipip {
		if n.NodeIP == nil || n.NodeIP.To4() == nil {
			return nil, fmt.Errorf("calico ipip needs the node's IPv4 address (Felix admits IP-in-IP only from Calico hosts)")
		}
		hosts = (&net.IPNet{IP: n.NodeIP.To4().Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}).String()
	}
	pools := n.ClusterCIDR.String()
	// tunl0 is a real node's (and the fixtures'); on a datapath without
	// a tunnel the knob refuses the ipip rules first (Generator.Fits).
	tunnel := n.dev(calicoIPIPTunnel, n.Tunnel)

	calicoRaw(rs)
	calicoMangle(rs, n.KubeIPVS)
	calicoFilter(rs, ipip, hosts, n.KubeIPVS)
	calicoNAT(rs, ipip, tunnel, pools)
	if n.KubeIPVS {
		ifaces := make([]string, len(eps))
		for i, e := range eps {
			ifaces[i] = e.Iface
		}
		if err := calicoIPVSChains(rs, ifaces, n.NodeIP); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// calicoRaw adds Felix's raw-table chains: workload marks and the
// reverse-path check of packets from pods.
func calicoRaw(rs *Ruleset) {
	rs.Chain("raw", "cali-PREROUTING", "cali-OUTPUT", "cali-rpf-skip", "cali-from-host-endpoint", "cali-to-host-endpoint")
	rs.Insert("raw", "PREROUTING", "-j cali-PREROUTING")
	rs.Insert("raw", "OUTPUT", "-j cali-OUTPUT")
	rs.Append("raw", "cali-PREROUTING", "-j MARK --set-xmark %s", caliAllMarks)
	rs.Append("raw", "cali-PREROUTING", "-i cali+ -j MARK --set-xmark %s", caliFromWL)
	rs.Append("raw", "cali-PREROUTING", "-m mark --mark %s -j cali-rpf-skip", caliFromWL)
	rs.Append("raw", "cali-PREROUTING", "-m mark --mark %s -m rpfilter --validmark --invert -j DROP", caliFromWL)
	rs.Append("raw", "cali-PREROUTING", "-m mark --mark 0x0/0x40000 -j cali-from-host-endpoint")
	rs.Append("raw", "cali-PREROUTING", "-m mark --mark %s -j ACCEPT", caliAccept)
	rs.Append("raw", "cali-OUTPUT", "-j MARK --set-xmark %s", caliAllMarks)
	rs.Append("raw", "cali-OUTPUT", "-j cali-to-host-endpoint")
	rs.Append("raw", "cali-OUTPUT", "-m mark --mark %s -j ACCEPT", caliAccept)
}

// calicoMangle adds Felix's mangle-table chains (with IPVS support,
// ipvs, one more return in cali-POSTROUTING).
func calicoMangle(rs *Ruleset, ipvs bool) {
	rs.Chain("mangle", "cali-PREROUTING", "cali-POSTROUTING", "cali-from-host-endpoint", "cali-to-host-endpoint")
	rs.Insert("mangle", "PREROUTING", "-j cali-PREROUTING")
	rs.Insert("mangle", "POSTROUTING", "-j cali-POSTROUTING")
	rs.Append("mangle", "cali-PREROUTING", "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT")
	rs.Append("mangle", "cali-PREROUTING", "-m mark --mark %s -j ACCEPT", caliAccept)
	rs.Append("mangle", "cali-PREROUTING", "-j cali-from-host-endpoint")
	rs.Append("mangle", "cali-PREROUTING", "-m mark --mark %s -j ACCEPT", caliAccept)
	rs.Append("mangle", "cali-POSTROUTING", "-m mark --mark %s -j RETURN", caliAccept)
	if ipvs {
		calicoIPVSPostrouting(rs)
	}
	rs.Append("mangle", "cali-POSTROUTING", "-j MARK --set-xmark %s", caliAllMarks)
	rs.Append("mangle", "cali-POSTROUTING", "-m conntrack --ctstate DNAT -j cali-to-host-endpoint")
	rs.Append("mangle", "cali-POSTROUTING", "-m mark --mark %s -j RETURN", caliAccept)
}

// calicoFilter adds Felix's filter-table chains; with IP-in-IP, the
// rules that admit tunnel packets from the Calico hosts (hosts) only;
// with IPVS support (ipvs), its rules in cali-INPUT and cali-OUTPUT
// (the chains they jump to are calicoIPVSChains').
func calicoFilter(rs *Ruleset, ipip bool, hosts string, ipvs bool) {
	rs.ReplaceChain("filter", "cali-FORWARD")
	rs.Chain("filter", "cali-INPUT", "cali-OUTPUT", "cali-wl-to-host", "cali-from-hep-forward", "cali-to-hep-forward",
		"cali-from-host-endpoint", "cali-to-host-endpoint", "cali-cidr-block")
	rs.Insert("filter", "INPUT", "-j cali-INPUT")
	rs.Insert("filter", "FORWARD", "-j cali-FORWARD")
	// StaticFilterForwardAppendRules: after kube-proxy's FORWARD hooks.
	rs.Append("filter", "FORWARD", "%s -m mark --mark %s -j ACCEPT", comment("Policy explicitly accepted packet."), caliAccept)
	rs.Append("filter", "FORWARD", "-j MARK --set-xmark %s", caliAccept)
	rs.Insert("filter", "OUTPUT", "-j cali-OUTPUT")
	rs.Append("filter", "cali-FORWARD", "-j MARK --set-xmark 0x0/0xe0000")
	rs.Append("filter", "cali-FORWARD", "-m mark --mark 0x0/0x10000 -j cali-from-hep-forward")
	rs.Append("filter", "cali-FORWARD", "-i cali+ -j cali-from-wl-dispatch")
	rs.Append("filter", "cali-FORWARD", "-o cali+ -j cali-to-wl-dispatch")
	rs.Append("filter", "cali-FORWARD", "-j cali-to-hep-forward")
	rs.Append("filter", "cali-FORWARD", "-j cali-cidr-block")
	if ipip {
		rs.Append("filter", "cali-INPUT", "-p 4 -s %s -m addrtype --dst-type LOCAL %s -j ACCEPT", hosts, comment("Allow IPIP packets from Calico hosts"))
		rs.Append("filter", "cali-INPUT", "-p 4 %s -j DROP", comment("Drop IPIP packets from non-Calico hosts"))
	}
	if ipvs {
		calicoIPVSInput(rs)
	}
	rs.Append("filter", "cali-INPUT", "-i cali+ -g cali-wl-to-host")
	rs.Append("filter", "cali-INPUT", "-m mark --mark %s -j ACCEPT", caliAccept)
	rs.Append("filter", "cali-INPUT", "-j MARK --set-xmark %s", caliAllMarks)
	rs.Append("filter", "cali-INPUT", "-j cali-from-host-endpoint")
	rs.Append("filter", "cali-INPUT", "%s -m mark --mark %s -j ACCEPT", comment("Host endpoint policy accepted packet."), caliAccept)
	rs.Append("filter", "cali-wl-to-host", "-j cali-from-wl-dispatch")
	rs.Append("filter", "cali-wl-to-host", "%s -j ACCEPT", comment("Configured DefaultEndpointToHostAction"))
	rs.Append("filter", "cali-OUTPUT", "-m mark --mark %s -j ACCEPT", caliAccept)
	if ipvs {
		calicoIPVSOutput(rs)
	}
	rs.Append("filter", "cali-OUTPUT", "-o cali+ -j RETURN")
	if ipip {
		rs.Append("filter", "cali-OUTPUT", "-p 4 -d %s -m addrtype --src-type LOCAL %s -j ACCEPT", hosts, comment("Allow IPIP packets to other Calico hosts"))
	}
	rs.Append("filter", "cali-OUTPUT", "-j MARK --set-xmark %s", caliAllMarks)
	rs.Append("filter", "cali-OUTPUT", "-m conntrack ! --ctstate DNAT -j cali-to-host-endpoint")
	rs.Append("filter", "cali-OUTPUT", "%s -m mark --mark %s -j ACCEPT", comment("Host endpoint policy accepted packet."), caliAccept)
}

// calicoIPIPTunnel is the device Felix's IP-in-IP rules match. Of the
// rules Felix writes in IP-in-IP mode, one matches a device: nat
// cali-POSTROUTING's masquerade of packets leaving by tunl0 with a
// source of the host's own (projectcalico/calico v3.29.7
// felix/rules/static.go StaticNATPostroutingChains, :922-923: tunl0 is
// added "if ipVersion == 4 && r.IPIPEnabled && len(r.IPIPTunnelAddress)
// > 0", as vxlan.calico is in VXLAN mode and the WireGuard device with
// WireGuard). Its IP-in-IP accepts and drops in cali-INPUT and
// cali-OUTPUT (filterInputChain, filterOutputChain: "-p 4") match the
// protocol, not a device.
const calicoIPIPTunnel = "tunl0"

// calicoNAT adds Felix's nat-table chains: outgoing NAT of the pool
// (pools) and, with IP-in-IP, masquerade on the tunnel device.
func calicoNAT(rs *Ruleset, ipip bool, tunnel, pools string) {
	rs.Chain("nat", "cali-PREROUTING", "cali-POSTROUTING", "cali-OUTPUT", "cali-fip-dnat", "cali-fip-snat", "cali-nat-outgoing")
	rs.Insert("nat", "PREROUTING", "-j cali-PREROUTING")
	rs.Insert("nat", "OUTPUT", "-j cali-OUTPUT")
	// Appended: Felix's MASQUERADE must not run before kube-proxy's
	// KUBE-POSTROUTING has cleared the masquerade mark.
	rs.Append("nat", "POSTROUTING", "-j cali-POSTROUTING")
	rs.Append("nat", "cali-PREROUTING", "-j cali-fip-dnat")
	rs.Append("nat", "cali-OUTPUT", "-j cali-fip-dnat")
	rs.Append("nat", "cali-POSTROUTING", "-j cali-fip-snat")
	rs.Append("nat", "cali-POSTROUTING", "-j cali-nat-outgoing")
	if ipip {
		rs.Append("nat", "cali-POSTROUTING", "-o %s -m addrtype ! --src-type LOCAL --limit-iface-out -m addrtype --src-type LOCAL -j MASQUERADE --random-fully", tunnel)
	}
	rs.Append("nat", "cali-nat-outgoing", "-s %s ! -d %s -j MASQUERADE --random-fully", pools, pools)
}
