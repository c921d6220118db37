package study

import (
	"testing"
	"time"
)

// Each part of a tuning is said with where it goes.
func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		t    Tuning
		want string
	}{
		{Tuning{Name: "baseline"}, "nothing: the machine as found"},
		{Tuning{Name: "nic", RPS: &RPS{CPUs: "0-2"}, Devices: DevicesUnderlay},
			"RPS to CPUs 0-2 on the server node's underlay NIC only"},
		{Tuning{Name: "rps-7", RPS: &RPS{CPUs: CPUsAllButSoftIRQ}},
			"RPS to CPUs all but the softirq core (every CPU of the node but the one that took most NET_RX softirqs at baseline) on the server node's underlay NIC, tunnel device and measured pods' host-side veths"},
		{Tuning{Name: "busy", Pods: true, Sysctls: map[string]string{"net.core.somaxconn": "1024", "net.core.busy_read": "50"}},
			"sysctls net.core.busy_read = 50, net.core.somaxconn = 1024 (a global one on the host, one of each namespace in the server node's namespace and each measured server pod's)"},
		{Tuning{Name: "bbr", Side: SideClient, Pods: true, Sysctls: map[string]string{"net.ipv4.tcp_congestion_control": "bbr"}},
			"sysctls net.ipv4.tcp_congestion_control = bbr (a global one on the host, one of each namespace in the client node's namespace and each measured client pod's)"},
		{Tuning{Name: "rps-both", Side: SideBoth, RPS: &RPS{CPUs: CPUsAll}},
			"RPS to CPUs all (every CPU of the node) on the server and client nodes' underlay NIC, tunnel device and measured pods' host-side veths"},
		{Tuning{Name: "poll", Side: SideBoth, CPUIdle: &CPUIdle{}},
			"no idle state that exits slower than 0 µs on the server and client nodes' CPUs (their PM QoS resume latency limit)"},
		{Tuning{Name: "c1", CPUIdle: &CPUIdle{MaxExitLatency: Duration{10 * time.Microsecond}}, Sysctls: map[string]string{"net.core.busy_read": "50"}},
			"sysctls net.core.busy_read = 50 (a global one on the host, one of each namespace in the server node's namespace); no idle state that exits slower than 10 µs on the server node's CPUs (their PM QoS resume latency limit)"},
	} {
		if got := tc.t.Describe(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.t.Name, got, tc.want)
		}
	}
}

// Steers says whether a tuning sets RPS or RFS at an end; sysctls alone
// do not steer.
func TestSteers(t *testing.T) {
	s := &Study{Spec: Spec{Tunings: []Tuning{{Name: "baseline"},
		{Name: "rps", RPS: &RPS{CPUs: CPUsAll}},
		{Name: "bbr", Side: SideClient, Sysctls: map[string]string{"net.ipv4.tcp_congestion_control": "bbr"}}}}}
	if !s.Steers(SideServer) || s.Steers(SideClient) {
		t.Errorf("server %v, client %v: want only the server end steered", s.Steers(SideServer), s.Steers(SideClient))
	}
	s.Spec.Tunings[1].Side = SideBoth
	if !s.Steers(SideClient) {
		t.Error("side: both does not steer the client end")
	}
}
