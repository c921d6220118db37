// Package l2tunnel is the Flannel-style overlay with a point-to-point
// Ethernet tunnel per remote node: pods on the bridge cni0 (package
// cnibridge), and a tunnel device (Geneve, GRE-TAP) carrying their
// frames to the other node. The geneve and gre datapaths are this with a
// different device.
//
// Design notes:
//   - Each node's subnet is a /24 of the datapath's pool; the tunnel
//     device holds the subnet's .0 as /32, like flannel.1.
//   - Per remote node: route SUBNET via REMOTE.0 dev TUN onlink and a
//     permanent neighbour REMOTE.0 -> remote tunnel MAC (what flanneld's
//     VXLAN backend programs, minus the FDB entry: the device has a fixed
//     remote, so there is nothing to look up).
//   - A device with a fixed remote is one per peer. The local engine has
//     two nodes, so one device named Spec.Device; more nodes are refused.
package l2tunnel

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/wire"
)

// Spec describes one tunnel datapath.
type Spec struct {
	Name     string
	Device   string
	Features []string
	// Overhead is the bytes the encapsulation adds to an inner IP packet
	// (outer IP + tunnel headers + inner Ethernet).
	Overhead int
	// Pool is the a.b.0.0 base of the per-node /24 subnets.
	Pool net.IP
	// Link builds the tunnel device from its attributes, the local node's
	// underlay NIC and address, and the remote node's underlay address.
	Link func(attrs netlink.LinkAttrs, under netlink.Link, local, remote net.IP) netlink.Link
}

// Datapath is a point-to-point L2 tunnel datapath.
type Datapath struct {
	datapath.MTUOverride
	s Spec
}

// New returns the datapath for s.
func New(s Spec) *Datapath { return &Datapath{s: s} }

// Name implements datapath.Datapath.
func (d *Datapath) Name() string { return d.s.Name }

// Features implements datapath.Datapath.
func (d *Datapath) Features() []string { return append([]string(nil), d.s.Features...) }

// Tunnel implements datapath.Datapath.
func (d *Datapath) Tunnel() string { return d.s.Device }

// PodBridge implements datapath.Datapath: cni0.
func (*Datapath) PodBridge() string { return cnibridge.Bridge }

// Devices implements datapath.Datapath: cni0, the pods' veths and the
// tunnel.
func (d *Datapath) Devices() []string { return cnibridge.Devices(d.s.Device) }

// MTU implements datapath.Datapath.
func (d *Datapath) MTU(underlay int) int { return d.Or(underlay - d.s.Overhead) }

func (d *Datapath) subnet(n datapath.Node) *net.IPNet { return cnibridge.Subnet(d.s.Pool, n) }
func (d *Datapath) tunIP(n datapath.Node) net.IP      { return wire.PodAddr(d.subnet(n).IP, 0) }

// SetupNode creates cni0 and turns on forwarding; the tunnel needs the
// remote node and is created by ConnectNodes.
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	return cnibridge.SetupBridge(h, n, d.subnet(n), d.MTU(n.UnderlayMTU))
}

// ConnectNodes creates the tunnel device on each node toward the other,
// then the route and neighbour entry.
// Equivalent to (geneve shown):
//
//	ip link add TUN mtu MTU type geneve id VNI remote REMOTE_UNDERLAY_IP
//	ip addr add SUBNET.0/32 dev TUN; ip link set TUN up
//	ip neigh add REMOTE.0 lladdr REMOTE_TUN_MAC dev TUN nud permanent
//	ip route add REMOTE_SUBNET via REMOTE.0 dev TUN onlink
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	if len(nodes) != 2 {
		return fmt.Errorf("datapath %s connects exactly two nodes (point-to-point tunnel), got %d", d.s.Name, len(nodes))
	}
	macs := make([]net.HardwareAddr, 2)
	for i, n := range nodes {
		mac, err := d.createTunnel(n, nodes[1-i])
		if err != nil {
			return err
		}
		macs[i] = mac
	}
	for i, n := range nodes {
		r := nodes[1-i]
		h, err := netns.Handle(n.Netns)
		if err != nil {
			return err
		}
		err = func() error {
			l, err := h.LinkByName(d.s.Device)
			if err != nil {
				return fmt.Errorf("find %s on %s: %w", d.s.Device, n.Name, err)
			}
			if err := wire.NeighPermanent(h, l, d.tunIP(r), macs[1-i]); err != nil {
				return err
			}
			return wire.RouteVia(h, l, d.subnet(r), d.tunIP(r), true)
		}()
		h.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *Datapath) createTunnel(n, remote datapath.Node) (net.HardwareAddr, error) {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	under, err := h.LinkByName(n.Underlay)
	if err != nil {
		return nil, fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
	}
	link := d.s.Link(wire.Attrs(d.s.Device, d.MTU(n.UnderlayMTU)), under, n.UnderlayIP, remote.UnderlayIP)
	if err := h.LinkAdd(link); err != nil {
		return nil, fmt.Errorf("ip link add %s type %s on %s: %w", d.s.Device, link.Type(), n.Name, err)
	}
	l, err := wire.Up(h, d.s.Device)
	if err != nil {
		return nil, err
	}
	if err := wire.AddrAdd(h, l, d.tunIP(n), 32); err != nil {
		return nil, err
	}
	return l.Attrs().HardwareAddr, nil
}

// AttachPod wires one pod to cni0 (package cnibridge).
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	return cnibridge.Attach(n, p, d.subnet(n), d.MTU(n.UnderlayMTU))
}
