package birdmesh

import (
	"net"
	"testing"

	"github.com/vishvananda/netlink"
)

func cidr(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestRouteIn: a wanted route is found only when BIRD wrote it (proto
// bird) with the same destination, gateway and device, or as a blackhole.
func TestRouteIn(t *testing.T) {
	gw := net.IPv4(198, 18, 0, 2)
	via := Route{Dst: cidr("10.244.1.0/24"), Gw: gw, Dev: "eth1"}
	hole := Route{Dst: cidr("192.168.0.0/24"), Blackhole: true}
	if got, want := via.String(), "10.244.1.0/24 via 198.18.0.2 dev eth1 proto bird"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := hole.String(), "blackhole 192.168.0.0/24 proto bird"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	kernel := func(p netlink.RouteProtocol, dst string, gw net.IP, dev, typ int) []netlink.Route {
		return []netlink.Route{{Protocol: p, Dst: cidr(dst), Gw: gw, LinkIndex: dev, Type: typ}}
	}
	for _, tc := range []struct {
		name   string
		r      Route
		routes []netlink.Route
		dev    int
		want   bool
	}{
		{"BIRD's route", via, kernel(RTProtBird, "10.244.1.0/24", gw, 3, 1), 3, true},
		{"static route of another protocol", via, kernel(17, "10.244.1.0/24", gw, 3, 1), 3, false},
		{"other gateway", via, kernel(RTProtBird, "10.244.1.0/24", net.IPv4(198, 18, 0, 9), 3, 1), 3, false},
		{"other device", via, kernel(RTProtBird, "10.244.1.0/24", gw, 4, 1), 3, false},
		{"other destination", via, kernel(RTProtBird, "10.244.2.0/24", gw, 3, 1), 3, false},
		{"no routes", via, nil, 3, false},
		{"blackhole", hole, kernel(RTProtBird, "192.168.0.0/24", nil, 0, rtnBlackhole), 0, true},
		{"unicast where a blackhole is wanted", hole, kernel(RTProtBird, "192.168.0.0/24", nil, 0, 1), 0, false},
	} {
		if got := tc.r.in(tc.routes, tc.dev); got != tc.want {
			t.Errorf("%s: in = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestZeroMeshCloses: Close of a mesh that never started is success, and
// so is a second Close (the engine closes after a failed setup too).
func TestZeroMeshCloses(t *testing.T) {
	var m Mesh
	for i := range 2 {
		if err := m.Close(); err != nil {
			t.Errorf("close %d: %v", i, err)
		}
	}
	if m.Dir() != "" || len(m.Daemons()) != 0 {
		t.Errorf("zero mesh has dir %q, daemons %v", m.Dir(), m.Daemons())
	}
}
