package flanneld

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/bridge"
	"github.com/cnibench/cnibench/internal/datapath/flannelvxlan"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
)

// nodeView is a node's flannel wiring with the run-specific parts (the
// leased subnets, random VTEP MACs) replaced by placeholders, so the
// in-process flannel-vxlan and flanneld's can be compared line by line.
func nodeView(t *testing.T, c *local.Cluster, subnets []*net.IPNet, ni int) []string {
	t.Helper()
	nodes := c.Nodes()
	var macs []string
	for _, n := range nodes {
		h, err := netns.Handle(n.Netns())
		if err != nil {
			t.Fatal(err)
		}
		l, err := h.LinkByName(flannelvxlan.Device)
		h.Close()
		if err != nil {
			continue // host-gw: no VTEP
		}
		macs = append(macs, l.Attrs().HardwareAddr.String())
	}
	norm := func(s string) string {
		for i, sn := range subnets {
			p := strings.TrimSuffix(sn.IP.String(), "0")
			s = strings.ReplaceAll(s, p, fmt.Sprintf("SUBNET%d.", i))
		}
		for i, m := range macs {
			s = strings.ReplaceAll(s, m, fmt.Sprintf("VTEP%d", i))
		}
		return s
	}
	h, err := netns.Handle(nodes[ni].Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out []string
	links, err := netns.Dump(h.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		if strings.HasPrefix(a.Name, "veth") {
			continue // pods' host veths: names differ only by pod name
		}
		line := fmt.Sprintf("link %s type %s mtu %d up=%v", a.Name, l.Type(), a.MTU, a.Flags&net.FlagUp != 0)
		if vx, ok := l.(*netlink.Vxlan); ok {
			line += fmt.Sprintf(" vni %d port %d learning %v local %s dev %s", vx.VxlanId, vx.Port, vx.Learning, vx.SrcAddr, names[vx.VtepDevIndex])
		}
		out = append(out, line)
		addrs, _ := netns.Dump(func() ([]netlink.Addr, error) { return h.AddrList(l, unix.AF_INET) })
		for _, ad := range addrs {
			out = append(out, norm(fmt.Sprintf("addr %s dev %s", ad.IPNet, a.Name)))
		}
		if a.Name == flannelvxlan.Device {
			neighs, _ := netns.Dump(func() ([]netlink.Neigh, error) { return h.NeighList(a.Index, unix.AF_INET) })
			for _, n := range neighs {
				out = append(out, norm(fmt.Sprintf("neigh %s lladdr %s state %#x", n.IP, n.HardwareAddr, n.State)))
			}
			fdb, _ := netns.Dump(func() ([]netlink.Neigh, error) { return h.NeighList(a.Index, unix.AF_BRIDGE) })
			for _, n := range fdb {
				out = append(out, norm(fmt.Sprintf("fdb %s dst %s state %#x", n.HardwareAddr, n.IP, n.State)))
			}
		}
	}
	routes, err := netns.Dump(func() ([]netlink.Route, error) { return h.RouteList(nil, unix.AF_INET) })
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if strings.HasPrefix(names[r.LinkIndex], "veth") {
			continue
		}
		out = append(out, norm(fmt.Sprintf("route %v via %v dev %s scope %d flags %#x", r.Dst, r.Gw, names[r.LinkIndex], r.Scope, r.Flags)))
	}
	slices.Sort(out)
	return out
}

// counters are the packet and byte counts iptables-save and nft print,
// which differ with the traffic a run sent.
var counters = regexp.MustCompile(`\[\d+:\d+\]|counter packets \d+ bytes \d+`)

// netfilterView is a node's netfilter state in rule order (FORWARD's
// hooks and the chains they jump to included): iptables-save without
// counters, then `nft list ruleset` (native tables, such as flanneld's
// nftables mode writes) where nft is installed.
func netfilterView(t *testing.T, ns string) []string {
	t.Helper()
	run := netfilter.InNetns(ns)
	snap, err := netfilter.Snapshot(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, l := range strings.Split(string(snap), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, "iptables "+counters.ReplaceAllString(l, ""))
		}
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return out
	}
	nft, err := run(context.Background(), []string{"nft", "list", "ruleset"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(nft), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, "nft "+counters.ReplaceAllString(l, ""))
		}
	}
	return out
}

// TestFlanneldMatchesInProcess: flanneld's VXLAN and host-gw backends
// and the in-process flannel-vxlan and bridge leave the same devices,
// addresses, routes, neighbour and FDB entries and MTU in a node (up to
// the leased subnet and the VTEP MACs), the same pod MTU, and the same
// netfilter state (iptables and nftables, FORWARD included): flanneld
// adds no FLANNEL-FWD of its own beside what the knob netfilter writes.
func TestFlanneldMatchesInProcess(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, tc := range []struct {
		backend   string
		inProcess datapath.Datapath
	}{{"vxlan", flannelvxlan.New()}, {"host-gw", bridge.New()}} {
		t.Run(tc.backend, func(t *testing.T) { compareImplementations(t, tc.inProcess, NewWithBackend(tc.backend)) })
	}
}

func compareImplementations(t *testing.T, inProcess datapath.Datapath, fd *Datapath) {
	requireFlannel(t, fd)
	views, nfViews := map[string][][]string{}, map[string][][]string{}
	podMTU := map[string]int{}
	for _, tc := range []struct {
		name string
		d    datapath.Datapath
	}{{"in-process", inProcess}, {"flanneld", fd}} {
		t.Run(tc.name, func(t *testing.T) {
			kerneltest.RequireFeatures(t, tc.d)
			c := dptest.Up(t, tc.d, 1500)
			servers, clients, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			dptest.TCPEcho(t, servers[0], clients[0], 256<<10)
			var subnets []*net.IPNet
			for _, n := range c.Nodes() {
				if tc.d == datapath.Datapath(fd) {
					subnets = append(subnets, fd.leases[n.Netns()].subnet)
				} else {
					_, sn, _ := net.ParseCIDR(fmt.Sprintf("10.244.%d.0/24", len(subnets)))
					subnets = append(subnets, sn)
				}
			}
			for i, n := range c.Nodes() {
				views[tc.name] = append(views[tc.name], nodeView(t, c, subnets, i))
				nfViews[tc.name] = append(nfViews[tc.name], netfilterView(t, n.Netns()))
			}
			h, err := netns.Handle(servers[0].Netns())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			l, err := h.LinkByName(datapath.PodEth)
			if err != nil {
				t.Fatal(err)
			}
			podMTU[tc.name] = l.Attrs().MTU
		})
	}
	a, b := views["in-process"], views["flanneld"]
	if len(a) == 0 || len(b) == 0 {
		t.Skip("skipped: one implementation did not run")
	}
	t.Logf("node 0 as both leave it:\n  %s", strings.Join(b[0], "\n  "))
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("node %d differs:\nin-process:\n  %s\nflanneld:\n  %s", i, strings.Join(a[i], "\n  "), strings.Join(b[i], "\n  "))
		}
	}
	for i, nf := range nfViews["in-process"] {
		if got := nfViews["flanneld"][i]; !slices.Equal(nf, got) {
			t.Errorf("node %d netfilter differs:\nin-process:\n  %s\nflanneld:\n  %s", i, strings.Join(nf, "\n  "), strings.Join(got, "\n  "))
		}
	}
	if podMTU["in-process"] != podMTU["flanneld"] {
		t.Errorf("pod MTU: in-process %d, flanneld %d", podMTU["in-process"], podMTU["flanneld"])
	}
}
