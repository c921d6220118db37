package kuberouter

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// dpNode is the i-th node of a local cluster as its datapath saw it.
func dpNode(i int, n *local.Node) datapath.Node {
	return datapath.Node{Name: n.Name(), Netns: n.Netns(), Index: i, Underlay: local.UnderlayDev, UnderlayIP: n.UnderlayIP()}
}

// routes lists a node's IPv4 routes of one protocol (ip route show proto
// PROTO), in iproute2's words, sorted.
func routes(t *testing.T, n *local.Node, proto string) []string {
	t.Helper()
	out, err := exec.Command("ip", "-n", n.Netns(), "-4", "route", "show", "proto", proto).CombinedOutput()
	if err != nil {
		t.Fatalf("ip route show proto %s on %s: %v\n%s", proto, n.Name(), err, out)
	}
	var rs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			rs = append(rs, l)
		}
	}
	slices.Sort(rs)
	return rs
}

// peerRoutes is what each node must hold: the other node's pod CIDR via
// its underlay address on eth1 (two-node cluster).
func peerRoutes(nodes []*local.Node, i int) []string {
	o := nodes[1-i]
	return []string{fmt.Sprintf("%s via %s dev %s", PodCIDR(dpNode(1-i, o)), o.UnderlayIP(), local.UnderlayDev)}
}

// checkBridge asserts that kube-bridge on node i holds the pod CIDR's
// gateway and has exactly the node's pods' veths as ports, hairpin on.
func checkBridge(t *testing.T, n *local.Node, i int) {
	t.Helper()
	h, err := netns.Handle(n.Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	br, err := h.LinkByName(Bridge)
	if err != nil {
		t.Fatalf("node %s has no %s: %v", n.Name(), Bridge, err)
	}
	if br.Type() != "bridge" {
		t.Errorf("node %s: %s is a %s, not a bridge", n.Name(), Bridge, br.Type())
	}
	addrs, err := h.AddrList(br, 2 /* AF_INET */)
	if err != nil {
		t.Fatal(err)
	}
	gw := fmt.Sprintf("%s.1/24", strings.TrimSuffix(PodCIDR(dpNode(i, n)).IP.String(), ".0"))
	if len(addrs) != 1 || addrs[0].IPNet.String() != gw {
		t.Errorf("node %s: %s addresses %v, want %s", n.Name(), Bridge, addrs, gw)
	}
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	for _, l := range links {
		if l.Attrs().MasterIndex != br.Attrs().Index {
			continue
		}
		ports = append(ports, l.Attrs().Name)
		if l.Type() != "veth" {
			t.Errorf("node %s: port %s of %s is a %s, want veth", n.Name(), l.Attrs().Name, Bridge, l.Type())
		}
		if pi, err := h.LinkGetProtinfo(l); err != nil || !pi.Hairpin {
			t.Errorf("node %s: port %s: hairpin off (%v), want on as the bridge plugin's hairpinMode", n.Name(), l.Attrs().Name, err)
		}
	}
	var pods []engine.Pod
	for _, p := range n.Pods() {
		pods = append(pods, p)
	}
	veths, err := n.HostVeths(pods)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range veths {
		want = append(want, v.Name)
	}
	slices.Sort(ports)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(ports, want) {
		t.Errorf("node %s: ports of %s %v, want the pods' veths %v", n.Name(), Bridge, ports, want)
	}
}

// TestKubeRouter: with static routes, every node has kube-bridge with
// its pods as ports and a route (proto 17, zebra, as kube-router writes it)
// to the other node's pod CIDR; pods reach each other on one node and
// across.
func TestKubeRouter(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := New()
	kerneltest.RequireFeatures(t, d)
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	nodes := c.Nodes()
	for i, n := range nodes {
		checkBridge(t, n, i)
		if got, want := routes(t, n, "17"), peerRoutes(nodes, i); !slices.Equal(got, want) {
			t.Errorf("node %s: proto 17 (zebra) routes %v, want %v", n.Name(), got, want)
		}
	}
	dptest.TCPEcho(t, servers[0], servers[1], 64<<10)
	dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
	dptest.UDPEcho(t, clients[1], servers[1], 1472)
}

// TestKubeRouterBIRD: with a BIRD per node, the routes to the other
// node's pod CIDR come from BGP (proto bird, over an Established iBGP
// session), the node's own CIDR is not written back into its kernel, pods
// reach each other across nodes over them, and Close stops the BIRDs,
// which take their routes with them.
func TestKubeRouterBIRD(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := NewBIRD()
	kerneltest.RequireFeatures(t, d)
	birdc := ""
	for _, b := range []string{"birdc", "/usr/sbin/birdc"} {
		if p, err := exec.LookPath(b); err == nil {
			birdc = p
			break
		}
	}
	if birdc == "" {
		t.Skip("skipped: birdc not found (apt-get install bird2)")
	}
	c := dptest.Up(t, d, 1500)
	nodes := c.Nodes()
	defer func() {
		if t.Failed() {
			for _, n := range nodes {
				kerneltest.Dump(t, n.Netns())
			}
			for _, b := range d.Running() {
				t.Logf("BIRD on %s:\n%s", b.Node(), b.Tail(30))
			}
		}
	}()
	servers, clients, err := c.ScalePods(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if ds := d.Daemons(); len(ds) != len(nodes) {
		t.Errorf("daemons %+v, want one bird per node", ds)
	}
	for i, n := range nodes {
		checkBridge(t, n, i)
		if got, want := routes(t, n, "bird"), peerRoutes(nodes, i); !slices.Equal(got, want) {
			t.Errorf("node %s: proto bird routes %v, want %v", n.Name(), got, want)
		}
		if got := routes(t, n, "17"); len(got) > 0 {
			t.Errorf("node %s: static routes %v besides BIRD's", n.Name(), got)
		}
	}
	for _, b := range d.Running() {
		out, err := exec.Command(birdc, "-s", b.Socket, "show", "protocols").CombinedOutput()
		if err != nil {
			t.Fatalf("birdc show protocols on %s: %v\n%s", b.Node(), err, out)
		}
		var sessions int
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) >= 6 && f[1] == "BGP" {
				sessions++
				if f[3] != "up" || f[5] != "Established" {
					t.Errorf("BIRD on %s: %s", b.Node(), l)
				}
			}
		}
		if sessions != len(nodes)-1 {
			t.Errorf("BIRD on %s has %d BGP sessions, want %d:\n%s", b.Node(), sessions, len(nodes)-1, out)
		}
	}
	dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
	dptest.TCPEcho(t, clients[1], servers[1], 64<<10)
	dptest.UDPEcho(t, servers[0], clients[1], 1472)

	if err := d.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, n := range nodes {
		if got := routes(t, n, "bird"); len(got) > 0 {
			t.Errorf("node %s keeps BIRD's routes after BIRD stopped: %v", n.Name(), got)
		}
	}
}
