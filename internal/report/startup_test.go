package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

const startupStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge, calico-vxlan]
  tunings: [baseline]
  workloads:
    - {name: startup, tool: podstartup, concurrency: [1, 10]}
  replicas: [1]
  trials: 2
  duration: 3s
`

// TestStartupFigures: a pod start-up sweep on two datapaths gives each
// datapath's start-up against pods at once (Fig. 15b for one CNI), one
// figure with a line per datapath, and the set-up by step stacked per
// datapath (Fig. 15a) with a legend entry per step.
func TestStartupFigures(t *testing.T) {
	s, samples := startupRun(t, 2)
	m := analysis.Build(s, samples)
	sec := buildWorkloads(s, m, samples)
	want := map[string]bool{
		"Pod network start-up vs pods started at once (bridge / startup)":       false,
		"Pod network start-up vs pods started at once (calico-vxlan / startup)": false,
		"Pod network set-up by step":                                            false,
	}
	for _, f := range allFigures(sec) {
		if _, ok := want[f.Title]; ok {
			want[f.Title] = true
			if f.SVG == "" {
				t.Errorf("%s: no SVG: %s", f.Title, f.Missing)
			}
			if f.Title == "Pod network set-up by step" {
				for _, step := range []string{"netns", "link", "address", "other"} {
					if !strings.Contains(string(f.SVG), step) {
						t.Errorf("steps figure lacks %q", step)
					}
				}
			}
		}
	}
	for title, found := range want {
		if !found {
			t.Errorf("no figure %q", title)
		}
	}
	across := sweepsAcrossDatapaths(s, m.Rows)
	if len(across) != 1 || !strings.HasPrefix(across[0].Title, "startup_ms per datapath") {
		var titles []string
		for _, f := range across {
			titles = append(titles, f.Title)
		}
		t.Errorf("figures across datapaths %v, want one of startup_ms", titles)
	}
}

// startupRun is startupStudy with trials trials of every cell.
func startupRun(t *testing.T, trials int) (*study.Study, []results.Sample) {
	t.Helper()
	s, err := study.Parse("s.yaml", []byte(startupStudy), study.Options{},
		study.Catalog{Datapaths: []string{"bridge", "calico-vxlan"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	var samples []results.Sample
	for _, c := range s.Cells() {
		w, _ := s.Workload(c.Workload)
		k := float64(w.Concurrent())
		for trial := 1; trial <= trials; trial++ {
			f := 1 + 0.01*float64(trial)
			m := map[string]float64{"startup_ms": 2 * k * f, "startup_max_ms": 3 * k * f, "setup_ms": 2 * f, "teardown_ms": 0.5,
				"phase_netns_ms": 0.5 * f, "phase_link_ms": 1 * f, "phase_address_ms": 0.3 * f, "phase_other_ms": 0.2 * f, "pods": k}
			samples = append(samples, results.Sample{Cell: c, Trial: trial, Start: time.Unix(0, 0), End: time.Unix(1, 0), Metrics: m})
		}
	}
	return s, samples
}
