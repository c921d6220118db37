package knob

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// TestTuningNeedsSysctlValues: `sysctls: {net.core.default_qdisc: fq}` on
// a kernel without sch_fq, or tcp_congestion_control: bbr without
// tcp_bbr, passed preflight (the sysctl exists) and every trial's write
// failed (ENOENT). A value a module provides is now a need of its own;
// other values are not.
func TestTuningNeedsSysctlValues(t *testing.T) {
	tu := study.Tuning{Name: "x", Sysctls: map[string]string{
		"net.core.default_qdisc":          "fq",
		"net.ipv4.tcp_congestion_control": "bbr",
		"net.core.busy_read":              "50",
	}}
	got := tuningEntry.Needs(&Target{Tuning: tu})
	for _, want := range []string{
		probe.Sysctl("net.core.default_qdisc"), "sysctl:net.core.default_qdisc=fq",
		probe.Sysctl("net.ipv4.tcp_congestion_control"), "sysctl:net.ipv4.tcp_congestion_control=bbr",
		probe.Sysctl("net.core.busy_read"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("needs %v: no %s", got, want)
		}
	}
	if slices.Contains(got, "sysctl:net.core.busy_read=50") {
		t.Errorf("needs %v: busy_read's value needs no module", got)
	}
	for _, f := range got {
		if !probe.IsKernel(f) {
			t.Errorf("need %s is not a kernel feature: a cluster's nodes would not be asked", f)
		}
	}
	// Written in a local node's namespace, or in pods', the congestion
	// control must also be one the host allows outside its namespace;
	// a cluster node's agent writes it in the host's, which may set any.
	for _, c := range []struct {
		local, pods bool
		want        string
	}{
		{false, false, "sysctl:net.ipv4.tcp_congestion_control=bbr"},
		{true, false, "sysctl:net.ipv4.tcp_congestion_control=bbr@netns"},
		{false, true, "sysctl:net.ipv4.tcp_congestion_control=bbr@netns"},
	} {
		tu := tu
		tu.Pods = c.pods
		if got := tuningEntry.Needs(&Target{Tuning: tu, Local: c.local}); !slices.Contains(got, c.want) {
			t.Errorf("local %v pods %v: needs %v, want %s", c.local, c.pods, got, c.want)
		}
	}
}
