package report

import (
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// Each part of a tuning is said with where it goes.
func TestDefined(t *testing.T) {
	for _, tc := range []struct {
		t    study.Tuning
		want string
	}{
		{study.Tuning{Name: "baseline"}, "nothing: the machine as found"},
		{study.Tuning{Name: "nic", RPS: &study.RPS{CPUs: "0-2"}, Devices: study.DevicesUnderlay},
			"RPS to CPUs 0-2 on the server node's underlay NIC only"},
		{study.Tuning{Name: "rps-7", RPS: &study.RPS{CPUs: study.CPUsAllButSoftIRQ}},
			"RPS to CPUs all but the softirq core (every CPU of the server node but the one that took most NET_RX softirqs at baseline) on the server node's underlay NIC, tunnel device and measured pods' host-side veths"},
		{study.Tuning{Name: "busy", Pods: true, Sysctls: map[string]string{"net.core.somaxconn": "1024", "net.core.busy_read": "50"}},
			"sysctls net.core.busy_read = 50, net.core.somaxconn = 1024 (a global one on the host, one of each namespace in the server node's namespace and each measured server pod's)"},
	} {
		if got := defined(tc.t); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.t.Name, got, tc.want)
		}
	}
}
