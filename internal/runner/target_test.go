package runner

import (
	"net"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// How a driver addresses each pair's server (what engine.Addr gives it)
// and which pod runs the client, for each target on each engine. The
// kube engine's pods come fronted by their Services (10.96.0.x here);
// knob service-path's ClusterIPs front the local engine's measured
// servers (10.96.100.x). Background pairs follow `target: pod` on a
// cluster, and nothing else: service-path fronts measured servers only,
// and a hairpin moves measured clients only.
func TestTargetPairs(t *testing.T) {
	kubePairs := func() []workload.Pair {
		var out []workload.Pair
		for i, s := range pods("srv", 2) {
			srv := engine.Front(ipPod{s, net.IPv4(10, 244, 1, byte(i+1))}, net.IPv4(10, 96, 0, byte(i+1)))
			out = append(out, workload.Pair{Server: srv, Client: pods("cli", 2)[i], Port: 5201 + i})
		}
		return out
	}
	localPairs := func() []workload.Pair {
		var out []workload.Pair
		for i, s := range pods("srv", 2) {
			out = append(out, workload.Pair{Server: ipPod{s, net.IPv4(10, 244, 1, byte(i+1))}, Client: pods("cli", 2)[i], Port: 5201 + i})
		}
		return out
	}
	front := []net.IP{net.IPv4(10, 96, 100, 1), net.IPv4(10, 96, 100, 2)}
	show := func(ps []workload.Pair) string {
		var b []string
		for _, p := range ps {
			b = append(b, p.Client.Name()+">"+engine.Addr(p.Server))
		}
		return strings.Join(b, " ")
	}
	for _, tc := range []struct {
		target       string
		remote       bool
		measured, bg string
	}{
		{"", true, "cli0>10.96.0.1 cli1>10.96.0.2", "cli0>10.96.0.1 cli1>10.96.0.2"},
		{study.TargetPod, true, "cli0>10.244.1.1 cli1>10.244.1.2", "cli0>10.244.1.1 cli1>10.244.1.2"},
		{study.TargetService, true, "cli0>10.96.0.1 cli1>10.96.0.2", "cli0>10.96.0.1 cli1>10.96.0.2"},
		{study.TargetHairpin, true, "srv0>10.96.0.1 srv1>10.96.0.2", "cli0>10.96.0.1 cli1>10.96.0.2"},
		{"", false, "cli0>10.244.1.1 cli1>10.244.1.2", "cli0>10.244.1.1 cli1>10.244.1.2"},
		{study.TargetPod, false, "cli0>10.244.1.1 cli1>10.244.1.2", "cli0>10.244.1.1 cli1>10.244.1.2"},
		{study.TargetService, false, "cli0>10.96.100.1 cli1>10.96.100.2", "cli0>10.244.1.1 cli1>10.244.1.2"},
		{study.TargetHairpin, false, "srv0>10.96.100.1 srv1>10.96.100.2", "cli0>10.244.1.1 cli1>10.244.1.2"},
	} {
		pairs, fr := localPairs, front
		if tc.remote {
			pairs, fr = kubePairs, nil // the kube engine needs no service-path
		}
		if got := show(targetPairs(pairs(), tc.target, fr, tc.remote)); got != tc.measured {
			t.Errorf("target %q remote %v: measured %s, want %s", tc.target, tc.remote, got, tc.measured)
		}
		bg := backgroundPairs(pairs(), tc.target, tc.remote)
		if got := show(bg); got != tc.bg {
			t.Errorf("target %q remote %v: background %s, want %s", tc.target, tc.remote, got, tc.bg)
		}
		if bg[1].Port != 5202 {
			t.Errorf("target %q remote %v: background port %d, want the pod's, 5202", tc.target, tc.remote, bg[1].Port)
		}
	}
}

// ipPod is a named pod with an address.
type ipPod struct {
	engine.Pod
	ip net.IP
}

func (p ipPod) IP() net.IP { return p.ip }
