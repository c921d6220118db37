package wire

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/netns"
)

// ConnectVTEPs programs, on every node, what both Flannel's VXLAN backend
// and Calico's Felix add for every other node: a route to that node's pod
// subnet via its VTEP address (onlink), a permanent neighbour entry from
// the VTEP address to the VTEP MAC, and an FDB entry from the VTEP MAC to
// the node's underlay address. No learning and no multicast: every entry
// is static, as both CNIs program it.
//
// Equivalent to, per remote node R:
//
//	ip route add SUBNET(R) via VTEP(R) dev DEV onlink
//	ip neigh add VTEP(R) lladdr MAC(R) dev DEV nud permanent
//	bridge fdb append MAC(R) dev DEV dst UNDERLAY(R) self permanent
func ConnectVTEPs(nodes []datapath.Node, dev string, vtep func(datapath.Node) net.IP, subnet func(datapath.Node) *net.IPNet) error {
	macs := make([]net.HardwareAddr, len(nodes))
	for i, n := range nodes {
		h, err := netns.Handle(n.Netns)
		if err != nil {
			return err
		}
		l, err := h.LinkByName(dev)
		h.Close()
		if err != nil {
			return fmt.Errorf("find %s on %s: %w", dev, n.Name, err)
		}
		macs[i] = l.Attrs().HardwareAddr
	}
	for i, n := range nodes {
		if err := connectOne(n, i, nodes, macs, dev, vtep, subnet); err != nil {
			return err
		}
	}
	return nil
}

func connectOne(n datapath.Node, self int, nodes []datapath.Node, macs []net.HardwareAddr, dev string,
	vtep func(datapath.Node) net.IP, subnet func(datapath.Node) *net.IPNet) error {
	h, err := netns.Handle(n.Netns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(dev)
	if err != nil {
		return fmt.Errorf("find %s on %s: %w", dev, n.Name, err)
	}
	for j, r := range nodes {
		if j == self {
			continue
		}
		if err := NeighPermanent(h, l, vtep(r), macs[j]); err != nil {
			return err
		}
		if err := FDBAppend(h, l, macs[j], r.UnderlayIP); err != nil {
			return err
		}
		if err := RouteVia(h, l, subnet(r), vtep(r), true); err != nil {
			return err
		}
	}
	return nil
}

// AddVxlan creates node n's VXLAN device name (VNI, UDP port, MTU) bound
// to the node's underlay NIC and address, as flanneld, Felix and Weave
// create theirs; learning is the kernel's MAC learning from received
// packets (Weave relies on it, flanneld and Felix program the FDB). The
// device is left down.
// Equivalent to: ip link add NAME mtu MTU type vxlan id VNI dev eth1 local UNDERLAY_IP dstport PORT [nolearning]
func AddVxlan(h *netns.NetlinkHandle, n datapath.Node, name string, vni, port, mtu int, learning bool) error {
	under, err := h.LinkByName(n.Underlay)
	if err != nil {
		return fmt.Errorf("underlay %s on %s: %w", n.Underlay, n.Name, err)
	}
	vx := &netlink.Vxlan{
		LinkAttrs:    Attrs(name, mtu),
		VxlanId:      vni,
		VtepDevIndex: under.Attrs().Index,
		SrcAddr:      n.UnderlayIP,
		Port:         port,
		Learning:     learning,
	}
	if err := h.LinkAdd(vx); err != nil {
		return fmt.Errorf("ip link add %s type vxlan on %s: %w", name, n.Name, err)
	}
	return nil
}
