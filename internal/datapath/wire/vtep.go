package wire

import (
	"fmt"
	"net"

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
