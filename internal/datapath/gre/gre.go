// Package gre is the GRE overlay: the GRE encapsulation mode that
// OVN-Kubernetes, Antrea and Kube-OVN offer, built the Flannel way.
//
// Design notes:
//   - Those CNIs put GRE ports on an OVS bridge; here, without OVS, the
//     kernel's GRE-TAP device (ip_gre module) carries Ethernet frames from
//     the bridge cni0 to the other node (package l2tunnel): a
//     point-to-point gretap with local and remote underlay addresses, a
//     route and a permanent neighbour per remote subnet.
//   - Pods use 10.246.0.0/16, a /24 per node.
//   - MTU: outer IP 20 + GRE 4 + inner Ethernet 14 = 38 bytes, so 1462,
//     what Antrea reserves for GRE too (pkg/agent/config GREOverhead = 38;
//     20 more over an IPv6 underlay, IPv6ExtraOverhead).
package gre

import (
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath/internal/l2tunnel"
	"github.com/cnibench/cnibench/internal/probe"
)

// Device is the GRE-TAP device name.
const Device = "gretap1"

// New returns the gre datapath.
func New() *l2tunnel.Datapath {
	return l2tunnel.New(l2tunnel.Spec{
		Name:     "gre",
		Device:   Device,
		Features: []string{probe.Veth, probe.Bridge, probe.GRE},
		Overhead: 38,
		Pool:     net.IPv4(10, 246, 0, 0),
		Link: func(a netlink.LinkAttrs, under netlink.Link, local, remote net.IP) netlink.Link {
			return &netlink.Gretap{LinkAttrs: a, Local: local, Remote: remote, PMtuDisc: 1, Ttl: 64,
				Link: uint32(under.Attrs().Index)}
		},
	})
}
