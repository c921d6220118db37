package analysis

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// TestNicModesUDPAtLossCeiling: seed 001 held every UDP send rate so
// that loss stayed under 3% ("We control the send rate to ensure the
// loss rate is less than 3%", its section 3.4), and its UDP figures are
// throughput at that rate. Every UDP workload of nic-modes, in each
// profile, measures at its 3% loss ceiling, not at a fixed offered rate
// a path may lose any share of (the flows and the sizes offered 1 Gbit/s
// per stream).
func TestNicModesUDPAtLossCeiling(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"host", "bridge", "ovs", "macvlan"}, Tools: registry.Tools()}
	base, err := study.Resolve("nic-modes", study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range append([]string{""}, base.ProfileNames()...) {
		s, err := study.Resolve("nic-modes", study.Options{Profile: profile}, cat)
		if err != nil {
			t.Fatal(err)
		}
		udp := 0
		for _, w := range s.Spec.Workloads {
			if w.Protocol != "udp" {
				continue
			}
			udp++
			if w.LossCeiling != "3%" || w.Rate != "" || len(w.Rates) > 0 {
				t.Errorf("profile %q: workload %s: lossCeiling %q, rate %q %v; want the paper's 3%% ceiling and no fixed rate", profile, w.Name, w.LossCeiling, w.Rate, w.Rates)
			}
		}
		if udp == 0 {
			t.Errorf("profile %q: no UDP workload", profile)
		}
	}
}

// TestCNICompareCPPReferencesInCycles: seed 004's costs per packet are
// hardware cycles (its equation 1: perf's cycles over the packets), so
// cni-compare's references to them name cpp_*_cycles on a cpp-* workload,
// never the ns a cpu-clock run records; a cpu-clock run's rows at the
// point make them say why they are not measured.
func TestCNICompareCPPReferencesInCycles(t *testing.T) {
	s, err := study.Resolve("cni-compare", study.Options{}, study.Catalog{Datapaths: []string{"flannel-vxlan", "weave", "cilium", "calico-ipip", "calico-routed", "kube-router"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range s.Spec.Reference {
		if !strings.HasPrefix(r.Metric, "cpp_") {
			continue
		}
		n++
		if !strings.HasSuffix(r.Metric, "_cycles") || !strings.HasPrefix(r.Workload, "cpp-") || r.Value == nil {
			t.Errorf("reference %s %s %s: want a value in cycles on a cpp-* workload", r.Datapath, r.Workload, r.Metric)
		}
	}
	if n == 0 {
		t.Fatal("cni-compare has no cost-per-packet reference")
	}
	ns := Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "cpp-intra", Replicas: 1}, Metric: "cpp_bridge_ns", CPU: -1, N: 1, Mean: 20}}
	for _, m := range matchReferences(s.Spec.Reference, []Row{ns}, nil, nil, nil, 0) {
		if m.Reference.Datapath == "flannel" && m.Reference.Metric == "cpp_bridge_cycles" && !strings.Contains(m.Missing, "not the paper's hardware cycles") {
			t.Errorf("flannel's bridge in cycles beside a cpu-clock run: missing %q", m.Missing)
		}
	}
}

// TestBuiltinNotesNameTheShownUnit: a built-in reference's note names no
// bitrate unit but the one its value is shown in (Display). Before,
// flannel-backends' Table V and VI bitrates were noted "receiver Mbit/s"
// beside a published column in Gbit/s ("paper 0.923").
func TestBuiltinNotesNameTheShownUnit(t *testing.T) {
	unit := regexp.MustCompile(`\b[KMGT]?bit/s\b`)
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, r := range s.Spec.Reference {
			shown := Display(r.Metric).Unit
			if r.Ratio != nil {
				shown = "" // a ratio has no unit
			}
			for _, u := range unit.FindAllString(r.Note, -1) {
				if u != shown {
					t.Errorf("%s: reference[%d] (%s %s %s) note %q names %s, its value is shown in %q", name, i, r.Datapath, r.Workload, r.Metric, r.Note, u, shown)
				}
			}
		}
	}
}
