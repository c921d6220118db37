// Package calicovxlan wires pods the way Calico does in VXLAN mode.
//
// Design notes (what Calico's Felix programs, reproduced with netlink):
//   - Pods are routed, not bridged. Each pod gets eth0 with a /32 address
//     and a default route via the link-local gateway 169.254.1.1. The host
//     side of the veth, cali<hash>, has no address; proxy ARP on it answers
//     the pod's ARP for 169.254.1.1 with the host's MAC, so every packet the
//     pod sends goes to the node's routing table.
//   - The node routes each local pod as PODIP/32 dev caliX scope link.
//   - Each node owns an address block (here a /24 of 192.168.0.0/16, one
//     per node; Calico's default block is /26 and it allocates more as they
//     fill, which changes nothing on the datapath). The node's vxlan.calico
//     device (VNI 4096, UDP 4789, no learning) carries the block's first
//     address as /32.
//   - For every remote node: a route BLOCK via REMOTE_TUNNEL_IP dev
//     vxlan.calico onlink, a permanent neighbour REMOTE_TUNNEL_IP ->
//     remote VTEP MAC, and an FDB entry VTEP MAC -> remote underlay IP.
//   - MTU: VXLAN costs 50 bytes, so 1450 on a 1500-byte underlay for the
//     tunnel and the pods (Calico's VXLAN MTU).
package calicovxlan

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/wire"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

const (
	// Device is Calico's VXLAN device name.
	Device = "vxlan.calico"
	vni    = 4096
	port   = 4789
	// overhead is outer Ethernet-less IPv4 + UDP + VXLAN + inner Ethernet.
	overhead = 50
)

var (
	poolBase  = net.IPv4(192, 168, 0, 0)
	gatewayIP = net.IPv4(169, 254, 1, 1)
	// hostVethMAC is the MAC Calico gives every host-side veth.
	hostVethMAC = net.HardwareAddr{0xee, 0xee, 0xee, 0xee, 0xee, 0xee}
)

// Datapath is the calico-vxlan datapath.
type Datapath struct{}

// New returns the datapath.
func New() *Datapath { return &Datapath{} }

// Name implements datapath.Datapath.
func (*Datapath) Name() string { return "calico-vxlan" }

// Features implements datapath.Datapath.
func (*Datapath) Features() []string { return []string{probe.Veth, probe.Vxlan} }

// Tunnel implements datapath.Datapath.
func (*Datapath) Tunnel() string { return Device }

// MTU implements datapath.Datapath.
func (*Datapath) MTU(underlay int) int { return underlay - overhead }

func block(n datapath.Node) *net.IPNet    { return wire.Subnet24(poolBase, n.Index) }
func tunnelIP(n datapath.Node) net.IP     { return wire.PodAddr(block(n).IP, 1) }
func podIP(n datapath.Node, i int) net.IP { return wire.PodAddr(block(n).IP, i+2) }

// SetupNode creates vxlan.calico and turns on forwarding.
// Equivalent to:
//
//	ip link add vxlan.calico mtu 1450 type vxlan id 4096 local UNDERLAY_IP dev eth1 dstport 4789 nolearning
//	ip addr add TUNNEL_IP/32 dev vxlan.calico; ip link set vxlan.calico up
//	sysctl net.ipv4.ip_forward=1
func (d *Datapath) SetupNode(n datapath.Node) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	under, err := h.LinkByName(n.Underlay)
	if err != nil {
		return fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
	}
	vx := &netlink.Vxlan{
		LinkAttrs:    wire.Attrs(Device, d.MTU(n.UnderlayMTU)),
		VxlanId:      vni,
		VtepDevIndex: under.Attrs().Index,
		SrcAddr:      n.UnderlayIP,
		Port:         port,
		Learning:     false,
	}
	if err := h.LinkAdd(vx); err != nil {
		return fmt.Errorf("ip link add %s type vxlan on %s: %w", Device, n.Name, err)
	}
	l, err := wire.Up(h, Device)
	if err != nil {
		return err
	}
	if err := wire.AddrAdd(h, l, tunnelIP(n), 32); err != nil {
		return err
	}
	return wire.Sysctl(n.Netns, "net/ipv4/ip_forward", "1")
}

// ConnectNodes programs the route, neighbour and FDB entry for every
// remote node's block, as Felix's VXLAN manager does.
func (d *Datapath) ConnectNodes(nodes []datapath.Node) error {
	macs := make([]net.HardwareAddr, len(nodes))
	for i, n := range nodes {
		mac, err := vtepMAC(n)
		if err != nil {
			return err
		}
		macs[i] = mac
	}
	for i, n := range nodes {
		h, err := netns.Handle(n.Netns)
		if err != nil {
			return err
		}
		err = func() error {
			l, err := h.LinkByName(Device)
			if err != nil {
				return fmt.Errorf("find %s on %s: %w", Device, n.Name, err)
			}
			for j, r := range nodes {
				if i == j {
					continue
				}
				if err := wire.NeighPermanent(h, l, tunnelIP(r), macs[j]); err != nil {
					return err
				}
				if err := wire.FDBAppend(h, l, macs[j], r.UnderlayIP); err != nil {
					return err
				}
				if err := wire.RouteVia(h, l, block(r), tunnelIP(r), true); err != nil {
					return err
				}
			}
			return nil
		}()
		h.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func vtepMAC(n datapath.Node) (net.HardwareAddr, error) {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	l, err := h.LinkByName(Device)
	if err != nil {
		return nil, fmt.Errorf("find %s on %s: %w", Device, n.Name, err)
	}
	return l.Attrs().HardwareAddr, nil
}

// AttachPod wires one pod.
// Equivalent to:
//
//	ip -n NODE link add caliX mtu 1450 address ee:ee:ee:ee:ee:ee type veth peer eth0 netns POD
//	ip -n POD addr add PODIP/32 dev eth0
//	ip -n POD route add 169.254.1.1 dev eth0 scope link; ip -n POD route add default via 169.254.1.1
//	ip -n NODE route add PODIP/32 dev caliX scope link
//	sysctl -w net.ipv4.conf.caliX.proxy_arp=1 net.ipv4.neigh.caliX.proxy_delay=0 (in NODE)
func (d *Datapath) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	if p.Index >= datapath.MaxPodsPerNode {
		return datapath.Attachment{}, fmt.Errorf("pod index %d exceeds %d pods per node", p.Index, datapath.MaxPodsPerNode)
	}
	node, err := netns.Handle(n.Netns)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer node.Close()
	pod, err := netns.Handle(p.Netns)
	if err != nil {
		return datapath.Attachment{}, err
	}
	defer pod.Close()

	hostName := wire.HostVethName("cali", p.Name)
	mtu := d.MTU(n.UnderlayMTU)
	host, err := wire.VethIntoPod(node, pod, hostName, datapath.PodEth, mtu)
	if err != nil {
		return datapath.Attachment{}, err
	}
	if err := node.LinkSetHardwareAddr(host, hostVethMAC); err != nil {
		return datapath.Attachment{}, fmt.Errorf("ip link set %s address %s: %w", hostName, hostVethMAC, err)
	}
	// proxy_arp must be on before the pod asks for its gateway.
	if err := wire.Sysctl(n.Netns, "net/ipv4/conf/"+hostName+"/proxy_arp", "1"); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.Sysctl(n.Netns, "net/ipv4/neigh/"+hostName+"/proxy_delay", "0"); err != nil {
		return datapath.Attachment{}, err
	}
	ip := podIP(n, p.Index)
	eth, err := wire.Up(pod, datapath.PodEth)
	if err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.AddrAdd(pod, eth, ip, 32); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.RouteLink(pod, eth, &net.IPNet{IP: gatewayIP, Mask: net.CIDRMask(32, 32)}); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.RouteVia(pod, eth, nil, gatewayIP, false); err != nil {
		return datapath.Attachment{}, err
	}
	if err := wire.RouteLink(node, host, &net.IPNet{IP: ip, Mask: net.CIDRMask(32, 32)}); err != nil {
		return datapath.Attachment{}, err
	}
	return datapath.Attachment{IP: ip, HostVeth: hostName}, nil
}
