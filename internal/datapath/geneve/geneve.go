// Package geneve is the Geneve overlay, standing for Cilium's tunnel
// mode with tunnel-protocol geneve.
//
// Design notes:
//   - Cilium programs a bridge-less path: eBPF on each pod's lxc veth
//     redirects to cilium_geneve, an external (collect-metadata) Geneve
//     device on UDP 6081 whose outer destination and VNI (the source's
//     security identity) the eBPF program sets per packet. Without eBPF
//     that device cannot be driven, so this datapath keeps the encapsulation
//     and the device name and replaces the eBPF forwarding with the Flannel
//     way (package l2tunnel): pods on cni0, a point-to-point Geneve device
//     to the other node with VNI 2, a route and a permanent neighbour. The
//     per-packet cost of the tunnel is Geneve's; the intra-node path is a
//     bridge, not Cilium's (the cilium datapath measures that).
//   - Pods use Cilium's default cluster pool 10.0.0.0/8, a /24 per node.
//   - MTU: Geneve without options costs 50 bytes (outer IP 20, UDP 8,
//     Geneve 8, inner Ethernet 14), so 1450, Cilium's tunnel MTU.
package geneve

import (
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath/internal/l2tunnel"
	"github.com/cnibench/cnibench/internal/probe"
)

const (
	// Device is Cilium's Geneve device name.
	Device = "cilium_geneve"
	// Port is the IANA Geneve port Cilium uses.
	Port = 6081
	vni  = 2
)

// New returns the geneve datapath.
func New() *l2tunnel.Datapath {
	return l2tunnel.New(l2tunnel.Spec{
		Name:     "geneve",
		Device:   Device,
		Features: []string{probe.Veth, probe.Bridge, probe.Geneve},
		Overhead: 50,
		Pool:     net.IPv4(10, 0, 0, 0),
		Link: func(a netlink.LinkAttrs, _ netlink.Link, _, remote net.IP) netlink.Link {
			return &netlink.Geneve{LinkAttrs: a, ID: vni, Remote: remote, Dport: Port}
		},
	})
}
