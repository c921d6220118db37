package ipvlan

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// TestL3ModeRoutedByNode checks that ipvlan-l3 is L3 mode as the kernel
// implements it, not L2 in disguise: the pods' eth0 are L3-mode NOARP
// children, no pod address is ever resolved on the underlay, and traffic
// across nodes depends on the node's route to the peer's pod subnet
// (with it a closed port refuses at once; without it nothing answers).
// Needs ipvlan (run it in the full-kernel VM, scripts/vm/go-test-exec.sh).
func TestL3ModeRoutedByNode(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := NewL3()
	kerneltest.RequireFeatures(t, d)
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	for _, p := range append(append([]*local.Pod(nil), servers...), clients...) {
		checkL3Child(t, p)
	}
	dptest.TCPEcho(t, servers[0], clients[0], 256<<10)
	dptest.TCPEcho(t, clients[1], servers[1], 64<<10)
	dptest.UDPEcho(t, servers[0], clients[0], 1500-28)
	dptest.TCPEcho(t, servers[0], servers[1], 64<<10)

	node := c.Nodes()[0]
	h, err := netns.Handle(node.Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	eth1, err := h.LinkByName(node.Underlay().Name)
	if err != nil {
		t.Fatal(err)
	}
	neighs, err := netns.Dump(func() ([]netlink.Neigh, error) { return h.NeighList(eth1.Attrs().Index, netlink.FAMILY_V4) })
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range neighs {
		if PodNetwork.Contains(n.IP) {
			t.Errorf("node %s resolved pod address %s on the underlay (L2 behaviour)", node.Name(), n.IP)
		}
	}

	peer := clients[0]
	if err := dialClosed(servers[0], peer.IP()); !errors.Is(err, unix.ECONNREFUSED) {
		t.Fatalf("dial a closed port of %s with the node's route: %v, want connection refused", peer.IP(), err)
	}
	route := &netlink.Route{LinkIndex: eth1.Attrs().Index, Dst: subnet(datapath.Node{Index: 1}), Gw: c.Nodes()[1].UnderlayIP()}
	if err := h.RouteDel(route); err != nil {
		t.Fatalf("ip route del %s: %v", route.Dst, err)
	}
	if err := dialClosed(servers[0], peer.IP()); err == nil || errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("without node %s's route to %s the peer still answered (%v): the node does not route L3-mode egress", node.Name(), route.Dst, err)
	}
}

// checkL3Child checks that p's eth0 is an ipvlan child in L3 mode, NOARP.
func checkL3Child(t *testing.T, p *local.Pod) {
	t.Helper()
	h, err := netns.Handle(p.Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(datapath.PodEth)
	if err != nil {
		t.Fatal(err)
	}
	iv, ok := l.(*netlink.IPVlan)
	if !ok || iv.Mode != netlink.IPVLAN_MODE_L3 {
		t.Errorf("pod %s: eth0 is %s %+v, want ipvlan mode l3", p.Name(), l.Type(), l)
	}
	if l.Attrs().RawFlags&unix.IFF_NOARP == 0 {
		t.Errorf("pod %s: eth0 flags %v lack NOARP", p.Name(), l.Attrs().Flags)
	}
}

// dialClosed dials TCP port 9 (nothing listens) of ip from p, waiting
// up to 2 s: a reachable pod refuses, an unreachable one times out.
func dialClosed(p *local.Pod, ip net.IP) error {
	return netns.Do(p.Netns(), func() error {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), "9"), 2*time.Second)
		if err == nil {
			conn.Close()
		}
		return err
	})
}
