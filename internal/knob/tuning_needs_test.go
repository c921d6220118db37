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
}
