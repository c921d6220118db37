package agent

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// lowerDev is the device the tunnel dev sends its encapsulated packets
// through, where the tunnel is bound to one: a VXLAN device's VTEP
// device (Flannel's --iface, felix's autodetected interface), an IP or
// GRE tunnel's link. "" for a tunnel bound to none (tunl0, Cilium's
// collect-metadata devices): the route to the peer decides there. The
// agent runs in the node's network namespace, so netlink's is the node's.
func lowerDev(dev string) (string, error) {
	l, err := netlink.LinkByName(dev)
	if err != nil {
		return "", fmt.Errorf("device %s: %w", dev, err)
	}
	idx := l.Attrs().ParentIndex
	switch t := l.(type) {
	case *netlink.Vxlan:
		idx = t.VtepDevIndex
	case *netlink.Iptun:
		idx = int(t.Link)
	case *netlink.Gretun:
		idx = int(t.Link)
	}
	if idx <= 0 || idx == l.Attrs().Index {
		return "", nil
	}
	lower, err := netlink.LinkByIndex(idx)
	if err != nil {
		return "", fmt.Errorf("device %s's lower device (index %d): %w", dev, idx, err)
	}
	return lower.Attrs().Name, nil
}
