package cnidetect

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// Pool is what detection reads of a Calico IPPool's spec.
type Pool struct {
	Name, CIDR          string
	IPIPMode, VXLANMode string // Always, CrossSubnet, Never ("" is Never)
	Disabled            bool
}

// Subnet says whether the run's two nodes share a subnet, by the CNI's
// own test, when Known; Why says how it was found.
type Subnet struct {
	Known, Same bool
	Why         string
}

// CalicoAddrAnnotation is where calico-node records a node's address
// with its prefix on the Kubernetes Node (libcalico-go
// lib/backend/k8s/resources/node.go, nodeBgpIpv4AddrAnnotation): felix
// reads the prefix from it to tell a same-subnet peer.
const CalicoAddrAnnotation = "projectcalico.org/IPv4Address"

// CalicoSubnet decides whether two nodes are on one subnet as felix does
// (felix/calc/l3_route_resolver.go nodeInOurSubnet: the local node's
// address prefix contains the peer's address), in both directions, from
// their CalicoAddrAnnotation values; unknown where either is missing or
// the two directions disagree (one end's packets then are encapsulated,
// the other's not).
func CalicoSubnet(server, client string) Subnet {
	sp, err1 := netip.ParsePrefix(server)
	cp, err2 := netip.ParsePrefix(client)
	if err1 != nil || err2 != nil {
		return Subnet{}
	}
	to, from := sp.Masked().Contains(cp.Addr()), cp.Masked().Contains(sp.Addr())
	why := fmt.Sprintf("the nodes' %s %s and %s", CalicoAddrAnnotation, server, client)
	if to != from {
		return Subnet{Why: why + " (one prefix holds the other's address, not the other way)"}
	}
	return Subnet{Known: true, Same: to, Why: why}
}

// calicoCross says whether Calico encapsulates with mode (vxlan, ipip)
// only across subnets: every enabled IPv4 pool that turns mode on does
// so CrossSubnet, as read from the IPPools, else from calico-node's pool
// settings (PoolEnv); and what said so ("" where nothing did). The run
// measures between the nodes' IPv4 addresses (CalicoAddrAnnotation), so
// an IPv6 pool's setting says nothing of its path. fromEnv says the
// answer is calico-node's env's: the default pool's setting at its
// first start, which a later edit of the pool does not change.
func calicoCross(in Input, mode string) (cross bool, what string, fromEnv bool) {
	pools := ipv4Pools(in.Pools)
	for _, p := range pools {
		v := p.IPIPMode
		if mode == "vxlan" {
			v = p.VXLANMode
		}
		switch {
		case p.Disabled || v == "" || strings.EqualFold(v, "Never"):
		case strings.EqualFold(v, "CrossSubnet"):
			cross, what = true, "ippool "+p.Name+": "+mode+"Mode CrossSubnet"
		default:
			return false, "ippool " + p.Name + ": " + mode + "Mode " + v, false
		}
	}
	if len(pools) > 0 {
		return cross, what, false
	}
	env := map[string]string{"vxlan": "CALICO_IPV4POOL_VXLAN", "ipip": "CALICO_IPV4POOL_IPIP"}[mode]
	for _, d := range in.DaemonSets {
		if v := d.Env[env]; strings.EqualFold(v, "CrossSubnet") || strings.EqualFold(v, "Always") {
			return strings.EqualFold(v, "CrossSubnet"), "daemonset " + d.Namespace + "/" + d.Name + ": " + env + "=" + v, true
		}
	}
	return false, "", false
}

// poolsOff says whether the IPPools read turn mode (vxlan, ipip) off in
// every enabled IPv4 pool: false where none was read, which says
// nothing.
func poolsOff(in Input, mode string) bool {
	pools := ipv4Pools(in.Pools)
	for _, p := range pools {
		v := p.IPIPMode
		if mode == "vxlan" {
			v = p.VXLANMode
		}
		if !p.Disabled && v != "" && !strings.EqualFold(v, "Never") {
			return false
		}
	}
	return len(pools) > 0
}

// ipv4Pools are the pools whose CIDR is IPv4 or not known (a pool read
// without one): the pools of the run's IPv4 path.
func ipv4Pools(pools []Pool) []Pool {
	var out []Pool
	for _, p := range pools {
		if pf, err := netip.ParsePrefix(p.CIDR); err == nil && !pf.Addr().Unmap().Is4() {
			continue
		}
		out = append(out, p)
	}
	return out
}

// calicoUnsettled is the warning for Calico's VXLAN or IP-in-IP that no
// IPPool read settles (what said Always, fromEnv; "" where nothing
// said): between nodes on one subnet (or not known to be on different
// ones) a CrossSubnet pool routes natively. "" where the nodes are on
// different subnets, or a pool read said Always.
func calicoUnsettled(in Input, mode, what string, fromEnv bool) string {
	unread := "no IPv4 IP pool was read"
	if in.PoolsUnread != "" {
		unread = "Calico's IP pools could not be read (" + in.PoolsUnread + ")"
	}
	switch {
	case in.Subnet.Known && !in.Subnet.Same:
		return ""
	case fromEnv:
		return "Calico " + mode + " is encapsulated per calico-node's first-start setting (" + what + "): calico-node uses it only to create the default IP pool, and the pool may since be CrossSubnet, which " +
			"encapsulates only between nodes on different subnets; " + unread + ", so between these nodes the measured path may be routed natively, not through " + mode
	case what == "" && in.PoolsUnread != "":
		return "Calico's IP pools could not be read (" + in.PoolsUnread + ") and calico-node's settings do not say their encapsulation: a CrossSubnet pool (the operator quickstart's VXLANCrossSubnet) encapsulates only between nodes on different subnets, so between these nodes the measured path may be routed natively, not through " + mode
	}
	return ""
}

// flannelDirect says whether Flannel's VXLAN backend routes directly
// between nodes that reach each other without a gateway
// (net-conf.json Backend.DirectRouting; flannel pkg/backend/vxlan
// vxlan.go, vxlan_network.go: the route to a lease whose public IP
// ip.DirectRouting finds on-link goes via the underlay, not flannel.N).
func flannelDirect(in Input) (bool, string) {
	var c struct {
		Backend struct {
			Type          string
			DirectRouting bool
		}
	}
	if json.Unmarshal([]byte(in.FlannelNetConf), &c) != nil || !c.Backend.DirectRouting {
		return false, ""
	}
	return true, "flannel net-conf.json: Backend.DirectRouting true"
}

// crossSubnet sets r's mode where the CNI encapsulates (encap) only
// between nodes on different subnets (what says why): between the run's
// nodes on one subnet the path is routed (routed is the mode that names
// it, and r.Routed why), on different ones encapsulated; where it is
// not known, the mode says the CNI's setting and r.Warning that the
// path may be routed.
func crossSubnet(in Input, r *Result, encap, routed, setting, what string, ev func(string)) {
	ev(what)
	switch {
	case in.Subnet.Known && in.Subnet.Same:
		r.Mode = routed
		r.Routed = fmt.Sprintf("%s (%s), and %s share a subnet: %s routes between them natively, no tunnel device carries the measured packets",
			what, encap+" "+setting, in.Subnet.Why, r.Name)
		ev(in.Subnet.Why + ": one subnet, routed")
	case in.Subnet.Known:
		r.Mode = encap
		ev(in.Subnet.Why + ": different subnets, encapsulated")
	default:
		r.Mode = encap + " " + setting
		why := "whether the run's nodes share a subnet is not known"
		if in.Subnet.Why != "" {
			why += " (" + in.Subnet.Why + ")"
		}
		r.Warning = fmt.Sprintf("%s encapsulates with %s only between nodes on different subnets (%s) and %s: between nodes on one subnet the measured path is routed natively, not through the tunnel device",
			r.Name, encap, what, why)
	}
}

// kubeRouterOverlay is the warning of a node with kube-router's per-peer
// IP-in-IP devices (tun-*): which peers it encapsulates to depends on
// its --overlay-type, which detection does not read.
const kubeRouterOverlay = "kube-router encapsulates in IP-in-IP (its tun-* devices, one per peer node) between nodes on different subnets " +
	"(--overlay-type=subnet, the default) or between all nodes (full): between the run's nodes the measured path may be routed natively " +
	"or encapsulated, and no tunnel device is taken for tunings or netem (which peer's device carries the packets is not read)"

// kubeRouterPeers is why no device is taken for the run's tunnel on
// kube-router's overlay (Result.NoTunnel).
const kubeRouterPeers = "kube-router's IP-in-IP devices (tun-*) are one per peer node, and which one carries the run's packets is not read"
