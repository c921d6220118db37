package calicorouted

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/netns"
)

// routeView lists every IPv4 route of a node's main table with all that
// decides forwarding and how it was installed: destination, type, next
// hop, device, scope, flags, protocol and metric.
//
// The one thing replaced is the name of a pod's host veth (cali + a hash
// of the pod's namespace name, which carries the run id) by "cali<pod>".
// Protocol and metric are compared as they are, not normalised: the BIRD
// configuration sets the kernel metric to 0, as Calico's BIRD 1.6 leaves
// it (BIRD 2 would write 32), and BIRD writes RTPROT_BIRD, which is the
// protocol the static routes are given. Were either to differ, the
// routes would still forward alike, but they would no longer read as
// Calico's, so the test says so.
func routeView(t *testing.T, n *local.Node) []string {
	t.Helper()
	h, err := netns.Handle(n.Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	links, err := netns.Dump(h.LinkList)
	if err != nil {
		t.Fatal(err)
	}
	names := map[int]string{}
	for _, l := range links {
		name := l.Attrs().Name
		if strings.HasPrefix(name, "cali") {
			name = "cali<pod>"
		}
		names[l.Attrs().Index] = name
	}
	routes, err := netns.Dump(func() ([]netlink.Route, error) { return h.RouteList(nil, unix.AF_INET) })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range routes {
		out = append(out, fmt.Sprintf("%v type %d via %v dev %s scope %d flags %#x proto %d metric %d",
			r.Dst, r.Type, r.Gw, names[r.LinkIndex], r.Scope, r.Flags, r.Protocol, r.Priority))
	}
	slices.Sort(out)
	return out
}

// TestBIRDRoutesMatchStatic: BIRD's routes between nodes give every node
// the same routing table as the static implementation: same
// destinations, next hops, devices, blackholes, protocol and metric.
func TestBIRDRoutesMatchStatic(t *testing.T) {
	b := NewBIRD()
	requireBIRD(t, b)
	views := map[string][][]string{}
	for _, tc := range []struct {
		name string
		d    datapath.Datapath
	}{{"static", New()}, {"bird", b}} {
		t.Run(tc.name, func(t *testing.T) {
			c := dptest.Up(t, tc.d, 1500)
			servers, clients, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			dptest.TCPEcho(t, servers[0], clients[0], 64<<10)
			for _, n := range c.Nodes() {
				views[tc.name] = append(views[tc.name], routeView(t, n))
			}
		})
	}
	a, s := views["bird"], views["static"]
	if len(a) == 0 || len(s) == 0 || len(a) != len(s) {
		t.Fatalf("not both implementations ran: static %d nodes, bird %d", len(s), len(a))
	}
	t.Logf("server node's routes, both implementations:\n  %s", strings.Join(a[0], "\n  "))
	for i := range s {
		if !slices.Equal(a[i], s[i]) {
			t.Errorf("node %d differs:\nstatic:\n  %s\nbird:\n  %s", i, strings.Join(s[i], "\n  "), strings.Join(a[i], "\n  "))
		}
	}
}
