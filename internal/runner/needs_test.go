package runner

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// TestLocalNeeds: what preflight asks is what doctor names studies with.
// Its own affects() left out what entries and knobs need beyond a
// datapath's Features (a missing tbf named no study though
// flannel-backends' link.rate is refused without it; a missing
// br_netfilter none though cni-compare skips flannel and weave).
func TestLocalNeeds(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	fb, err := study.Resolve("flannel-backends", study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LocalNeeds(fb)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{probe.TBF, probe.Netem, probe.Vxlan, probe.ToolFlanneld} {
		if !slices.Contains(got, want) {
			t.Errorf("flannel-backends needs %v: no %s", got, want)
		}
	}
	s := parseSpec(t, "  datapaths:\n    - {name: f, type: flannel-vxlan, netfilter: {cni: flannel}}\n    - {name: b, type: bridge}\n"+
		"  tunings:\n    - baseline\n    - {name: q, sysctls: {net.core.default_qdisc: fq}}\n  workloads: [{tool: iperf3}]\n")
	got, err = LocalNeeds(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{probe.BrNetfilter, probe.Iptables, probe.Sysctl("net.core.default_qdisc"), probe.SysctlValue("net.core.default_qdisc", "fq", true)} {
		if !slices.Contains(got, want) {
			t.Errorf("needs %v: no %s", got, want)
		}
	}
	if n := len(got); n != len(slices.Compact(slices.Sorted(slices.Values(got)))) {
		t.Errorf("needs %v: listed twice", got)
	}
}
