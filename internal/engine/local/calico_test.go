package local

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// TestCalicoBlackholes: every Calico datapath keeps, on each node, one
// blackhole route for the node's own block with the protocol of whoever
// programs it on a real node (BIRD: 12; Felix's VXLAN manager: 80), so
// an address of the block that no pod holds has no route on the node,
// while the pods' /32 routes still win.
func TestCalicoBlackholes(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, tc := range []struct {
		name  string
		proto netlink.RouteProtocol
	}{{"calico-vxlan", 80}, {"calico-ipip", 12}, {"calico-routed", 12}} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := catalog.Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			kerneltest.RequireFeatures(t, d)
			c := upCluster(t, d)
			if _, _, err := c.ScalePods(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			for _, n := range c.Nodes() {
				checkBlackhole(t, n, tc.proto)
			}
		})
	}
}

func checkBlackhole(t *testing.T, n *Node, proto netlink.RouteProtocol) {
	t.Helper()
	pod := n.Pods()[0].IP().To4()
	block := &net.IPNet{IP: pod.Mask(net.CIDRMask(24, 32)), Mask: net.CIDRMask(24, 32)}
	h, err := netns.Handle(n.Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	holes, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Type: unix.RTN_BLACKHOLE}, netlink.RT_FILTER_TYPE)
	if err != nil {
		t.Fatal(err)
	}
	if len(holes) != 1 || holes[0].Dst.String() != block.String() || holes[0].Protocol != proto {
		t.Errorf("node %s: blackhole routes %v, want one for %s proto %d", n.Name(), holes, block, proto)
	}
	if _, err := h.RouteGet(pod); err != nil {
		t.Errorf("node %s: no route to its pod %s: %v", n.Name(), pod, err)
	}
	free := append(net.IP(nil), pod...)
	free[3] = 250
	if _, err := h.RouteGet(free); !errors.Is(err, unix.EINVAL) {
		t.Errorf("node %s: route get %s (no pod holds it): %v, want the blackhole's EINVAL", n.Name(), free, err)
	}
}
