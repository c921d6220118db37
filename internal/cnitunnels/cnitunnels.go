// Package cnitunnels is the one table of the tunnel devices real CNIs
// and kernel modules make on a node: each name (or name pattern) with
// the CNI and mode it tells, the datapath of cnibench's catalogue it
// stands for, and the encapsulation it carries. Three readers derive
// their lists from it, so they cannot drift apart: the datapath
// catalogue (a kube node's tunnel device, catalog.TunnelDevice), CNI
// detection (cnidetect: a CNI's mode from its devices) and advise's
// inspection (a tunnel's kind and overhead by its name). It is pure data
// and imports nothing of the module.
package cnitunnels

import (
	"path"
	"slices"
)

// Device is one line of the table.
type Device struct {
	// Pattern is the device's name, or a path.Match pattern for the
	// names a CNI numbers (flannel.<VNI>: flannel.[0-9]*).
	Pattern string
	// CNI and Mode are what the device tells, as cnidetect names them
	// (calico, vxlan); CNI is empty where no CNI of cnidetect's makes
	// it, Mode where the device is there in every mode of the CNI.
	CNI, Mode string
	// Datapath is the catalogue datapath the device stands for as a kube
	// node's tunnel device; empty for none.
	Datapath string
	// Encap is the encapsulation: vxlan, geneve, ipip, gre, wireguard or
	// udp (advise's overhead tables are keyed by it).
	Encap string
	// IPv6 marks a dual-stack node's second device, whose packets go
	// over IPv6 (an outer header 20 bytes longer).
	IPv6 bool
	// EveryNS marks a kernel module's fallback device, which loading
	// the module makes in every network namespace: a node of any CNI may
	// have it, idle.
	EveryNS bool
	// Family marks a name family: any device so named, where no other
	// line matches, carries Encap (advise tells a tunnel by it). It
	// names no CNI, mode or datapath, and a line it overlaps wins.
	Family bool
}

// List is the table. Its order is the kube engine's order of preference
// for a node's tunnel device (the first line with a datapath that a node
// has names it) and, among one CNI's lines, cnidetect's (the first that
// a node has tells the mode). Lines of one meaning may overlap; lines of
// different meanings must not (TestNoConflicts), except a Family's.
var List = []Device{
	// Calico's WireGuard (felix's WireguardInterfaceName defaults): first,
	// for it carries the pod traffic between the nodes it encrypts for
	// where vxlan.calico or tunl0 exist too.
	{Pattern: "wireguard.cali", CNI: "calico", Mode: "wireguard", Datapath: "wireguard", Encap: "wireguard"},
	{Pattern: "wg-v6.cali", CNI: "calico", Mode: "wireguard", Datapath: "wireguard", Encap: "wireguard", IPv6: true},
	// Calico felix's VXLAN devices (vxlan-v6.calico for IPv6).
	{Pattern: "vxlan.calico", CNI: "calico", Mode: "vxlan", Datapath: "calico-vxlan", Encap: "vxlan"},
	{Pattern: "vxlan-v6.calico", CNI: "calico", Mode: "vxlan", Datapath: "calico-vxlan", Encap: "vxlan", IPv6: true},
	// Flannel's vxlan backend: flannel.<VNI>, flannel-v6.<VNI> for IPv6
	// (flannel pkg/backend/vxlan/vxlan.go: fmt.Sprintf("flannel.%d", VNI)).
	{Pattern: "flannel.[0-9]*", CNI: "flannel", Mode: "vxlan", Datapath: "flannel-vxlan", Encap: "vxlan"},
	{Pattern: "flannel-v6.[0-9]*", CNI: "flannel", Mode: "vxlan", Datapath: "flannel-vxlan", Encap: "vxlan", IPv6: true},
	{Pattern: "cilium_vxlan", CNI: "cilium", Mode: "vxlan", Datapath: "cilium", Encap: "vxlan"},
	{Pattern: "cilium_geneve", CNI: "cilium", Mode: "geneve", Datapath: "cilium", Encap: "geneve"},
	// Cilium's WireGuard encryption, in any of its modes: no mode of its
	// own, and no datapath of the catalogue.
	{Pattern: "cilium_wg0", CNI: "cilium", Encap: "wireguard"},
	// Flannel's ipip backend (pkg/backend/ipip/ipip.go: tunnelName), under
	// the catalogue's IP-in-IP datapath: the same encapsulation.
	{Pattern: "flannel.ipip", CNI: "flannel", Mode: "ipip", Datapath: "calico-ipip", Encap: "ipip"},
	// Flannel's wireguard backend (pkg/backend/wireguard/wireguard.go).
	{Pattern: "flannel-wg", CNI: "flannel", Mode: "wireguard", Datapath: "wireguard", Encap: "wireguard"},
	{Pattern: "flannel-wg-v6", CNI: "flannel", Mode: "wireguard", Datapath: "wireguard", Encap: "wireguard", IPv6: true},
	// Weave's fast datapath: the VXLAN vport of its OVS datapath (weave
	// router/fastdp.go: fmt.Sprintf("vxlan-%d", udpPort)), which the local
	// engine's weave names so too in bridge mode (vxlan_sys_6784 is
	// ovs-dpctl's name for it there). Not the weave bridge, which pods
	// hang off; sleeve mode encapsulates in the router: no device.
	{Pattern: "vxlan-6784", CNI: "weave", Mode: "vxlan (fastdp)", Datapath: "weave", Encap: "vxlan"},
	// Flannel's udp backend opens the TUN device flannel%d
	// (pkg/backend/udp: ip.OpenTun("flannel%d")): flannel0.
	{Pattern: "flannel[0-9]*", CNI: "flannel", Mode: "udp", Datapath: "flannel-udp", Encap: "udp"},
	// kube-router's overlay (--enable-overlay, on by default): an IP-in-IP
	// device per peer node, tun-<hash of the peer's address> (kube-router
	// pkg/utils GenerateTunnelName), to peers on other subnets
	// (--overlay-type=subnet, the default) or to all (full). No datapath:
	// which peer's device carries a run's packets is not read from the
	// name, so the kube engine takes none of them for the node's tunnel.
	{Pattern: "tun-*", CNI: "kube-router", Mode: "ipip", Encap: "ipip"},
	{Pattern: "genev_sys_6081", Datapath: "geneve", Encap: "geneve"}, // OVN-Kubernetes, Antrea (OVS geneve)
	{Pattern: "vxlan_sys_4789", Datapath: "ovs", Encap: "vxlan"},     // OVS-based CNIs' VXLAN port
	// Last: loading the ipip module makes tunl0 in every network
	// namespace, so a node of any CNI may have it; Calico's IP-in-IP is
	// the one that sends through it (felix sets it up for IP-in-IP).
	{Pattern: "tunl0", CNI: "calico", Mode: "ipip", Datapath: "calico-ipip", Encap: "ipip", EveryNS: true},
	// The ip_gre module's fallback device: no CNI's.
	{Pattern: "gre0", Encap: "gre", EveryNS: true},
	// Name families: other VNIs' and ports' devices of the names above
	// (flannel.<VNI> whatever follows the dot, Weave's vxlan-<port>,
	// OVS's genev_sys_<port>).
	{Pattern: "flannel.*", Encap: "vxlan", Family: true},
	{Pattern: "flannel-v6.*", Encap: "vxlan", IPv6: true, Family: true},
	{Pattern: "vxlan-*", Encap: "vxlan", Family: true},
	{Pattern: "genev_sys_*", Encap: "geneve", Family: true},
}

// Matches says whether name is one of d's names.
func (d Device) Matches(name string) bool {
	ok, _ := path.Match(d.Pattern, name)
	return ok
}

// Fallbacks are the names of the kernel modules' fallback devices
// (EveryNS lines: tunl0, gre0), which a node of any CNI may have, idle.
func Fallbacks() []string {
	var out []string
	for _, d := range List {
		if d.EveryNS {
			out = append(out, d.Pattern)
		}
	}
	return out
}

// Lookup is the line that tells what device name is: the first line
// that matches it, a Family's only where no other line does.
func Lookup(name string) (Device, bool) {
	for _, family := range []bool{false, true} {
		for _, d := range List {
			if d.Family == family && d.Matches(name) {
				return d, true
			}
		}
	}
	return Device{}, false
}

// First is the first line of List that keep keeps and one of links
// matches, with that link (of several matching one line, the lowest
// name); ok is false when there is none.
func First(links []string, keep func(Device) bool) (d Device, link string, ok bool) {
	sorted := slices.Sorted(slices.Values(links))
	for _, d := range List {
		if !keep(d) {
			continue
		}
		for _, l := range sorted {
			if d.Matches(l) {
				return d, l, true
			}
		}
	}
	return Device{}, "", false
}
