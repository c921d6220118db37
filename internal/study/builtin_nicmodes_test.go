package study_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// nicModes resolves the nic-modes study with a profile and --set values.
func nicModes(t *testing.T, profile string, set ...string) *study.Study {
	t.Helper()
	s, err := study.Resolve("nic-modes", study.Options{Profile: profile, Set: set},
		study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatalf("nic-modes profile %q: %v", profile, err)
	}
	return s
}

// nicWorkload is the study's workload of that name, or nil.
func nicWorkload(s *study.Study, name string) *study.Workload {
	for i := range s.Spec.Workloads {
		if s.Spec.Workloads[i].Name == name {
			return &s.Spec.Workloads[i]
		}
	}
	return nil
}

// TestNicModesFlowsSweep: the TCP flows of the default and paper profiles
// take every even flow count, because the paper reads Figs. 6 and 7 at 6
// (OVS and the bridge level off above it on one host, peak at it across
// hosts) and at 10 (MACVLAN's peak across hosts); a sweep of 1, 2, 4, 8,
// 16 has neither point. The quick profile keeps its two counts.
func TestNicModesFlowsSweep(t *testing.T) {
	want := []int{1, 2, 4, 6, 8, 10, 12, 14, 16}
	for _, prof := range []string{"", "paper"} {
		s := nicModes(t, prof)
		for _, name := range []string{"flows-chc", "flows-chhc"} {
			w := nicWorkload(s, name)
			if w == nil || !slices.Equal(w.Parallels, want) {
				t.Errorf("profile %q: %s parallels %v, want %v", prof, name, w, want)
			}
		}
	}
	q := nicModes(t, "quick")
	if w := nicWorkload(q, "flows-chhc"); w == nil || !slices.Equal(w.Parallels, []int{1, 2}) {
		t.Errorf("quick: flows-chhc %+v, want parallels [1 2]", w)
	}
}

// TestNicModesUDPFlowsOneHost: multi-flow UDP on one host (the paper's
// Fig. 12) is measured as across hosts (Fig. 13): the same datagram, loss
// ceiling and flow counts, both pods on one node; not in the quick
// profile (each point costs a search). With the paper's pktgen sender it
// is refused on MACVLAN as udp-chc is.
func TestNicModesUDPFlowsOneHost(t *testing.T) {
	s := nicModes(t, "")
	one, two := nicWorkload(s, "udp-flows-chc"), nicWorkload(s, "udp-flows-chhc")
	if one == nil || two == nil {
		t.Fatalf("udp-flows-chc %v, udp-flows-chhc %v: want both", one, two)
	}
	if !one.IntraNode() || two.IntraNode() || one.Protocol != "udp" || one.Length != two.Length ||
		one.LossCeiling != two.LossCeiling || !slices.Equal(one.Parallels, two.Parallels) {
		t.Errorf("udp-flows-chc %+v, want udp-flows-chhc's %+v on one node", *one, *two)
	}
	if nicWorkload(nicModes(t, "quick"), "udp-flows-chc") != nil {
		t.Error("the quick profile runs udp-flows-chc, a search per flow count")
	}
	p := nicModes(t, "", "workloads.udp-flows-chc.sender=pktgen", "workloads=[udp-flows-chc]")
	m := workload.Machine{Pktgen: func() error { return nil }}
	_, err := workload.Prepare(p.Spec.Workloads, m, []workload.Datapath{{Name: "macvlan", Type: "macvlan", PodMTU: 1500}})
	if err == nil || !strings.Contains(err.Error(), "workload udp-flows-chc: sender pktgen cannot feed a MACVLAN-to-MACVLAN path on one host") {
		t.Errorf("pktgen on MACVLAN, one node: %v", err)
	}
	if _, err := workload.Prepare(p.Spec.Workloads, m, []workload.Datapath{{Name: "bridge", Type: "bridge", PodMTU: 1500}}); err != nil {
		t.Errorf("pktgen on the bridge, one node: %v", err)
	}
}
