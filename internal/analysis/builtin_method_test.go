package analysis

import (
	"testing"

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
