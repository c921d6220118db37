package seen

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// A steering sighting leans as the run decided: rfs worse than the
// baseline in both cells is against the candidate that steers, never a
// reason for it; all undecided says nothing either way; one cell better
// is a reason.
func TestSteeringLean(t *testing.T) {
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [{name: flannel, type: flannel-vxlan}, bridge]
  tunings: [baseline, rfs]
  workloads: [{name: http, tool: ab, concurrency: [8]}]
  trials: 3
  duration: 3s
`), study.Options{}, study.Catalog{Datapaths: []string{"flannel-vxlan", "bridge"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	stop := func(dp, decision string, r float64) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "rfs", Workload: "http", Replicas: 1}, Metric: results.MetricRequests,
			N: 3, Valid: 3, Decision: decision, Versus: "baseline", Ratio: &r, Low: &r, High: &r, Confidence: 0.95}
	}
	for _, c := range []struct {
		name  string
		stops []results.Stop
		want  string
	}{
		{"worse in both", []results.Stop{stop("flannel", "worse", 0.72), stop("bridge", "worse", 0.9)}, advise.LeanAgainst},
		{"equal and worse", []results.Stop{stop("flannel", "equal", 1.0), stop("bridge", "worse", 0.9)}, advise.LeanAgainst},
		{"undecided", []results.Stop{stop("flannel", "undecided", 1.3), stop("bridge", "undecided", 0.8)}, advise.LeanUndecided},
		{"one better", []results.Stop{stop("flannel", "better", 1.3), stop("bridge", "equal", 1.0)}, advise.LeanFor},
		// Better in one cell, worse in another: a trade-off, no reason
		// for rfs (--prove would reject it so).
		{"better and worse", []results.Stop{stop("flannel", "better", 1.3), stop("bridge", "worse", 0.9)}, advise.LeanMixed},
	} {
		got := steering(&results.Run{Stops: c.stops}, s)
		if got.text == "" || got.lean != c.want {
			t.Errorf("%s: lean %q (%q), want %q", c.name, got.lean, got.text, c.want)
		}
	}
	// A run from before stops.json recorded what a decision was against
	// (versus empty) compared its tunings with the baseline: its
	// steering cells are shown as the baseline's.
	old := stop("flannel", "worse", 0.72)
	old.Versus = ""
	if got := steering(&results.Run{Stops: []results.Stop{old}}, s); !strings.Contains(got.text, "against baseline: worse in 1") {
		t.Errorf("a steering cell of a run without versus: %q", got.text)
	}
	// One against another datapath is not against the baseline.
	other := stop("flannel", "worse", 0.72)
	other.Versus = "bridge"
	if got := steering(&results.Run{Stops: []results.Stop{other}}, s); got.text != "" {
		t.Errorf("a cell decided against a datapath: %s", got.text)
	}
	// A decision of one trial has no interval behind it: no sighting.
	one := stop("flannel", "worse", 0.72)
	one.N, one.Valid = 1, 1
	if got := steering(&results.Run{Stops: []results.Stop{one}}, s); got.text != "" {
		t.Errorf("a steering cell of one trial: %s", got.text)
	}
}

// An overlay that cost nothing against the datapath without one (equal
// within the margin in its decided cell) leans against the rules that
// cut an overlay's cost, native routing among them.
func TestOverlayLean(t *testing.T) {
	s := dpStudy(t)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	gain := map[string]float64{"calico-vxlan": 1, "host": 1.3, "calico-routed": 1, "bridge": 0.95}
	run := &results.Run{}
	at := 0
	for i, d := range []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15} {
		for _, dp := range []string{"calico-vxlan", "host", "calico-routed", "bridge"} {
			c := results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1}
			v := 10e9 * d * gain[dp] * (1 + 0.001*float64(i%3-1))
			run.Samples = append(run.Samples, results.Sample{Cell: c, Trial: i + 1, Start: t0.Add(time.Duration(at) * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: v}})
			at++
			if i == 0 {
				run.Stops = append(run.Stops, results.Stop{Cell: c, Metric: results.MetricBitrate})
			}
		}
	}
	got := overlay(run, s)
	if got.text == "" || got.lean != advise.LeanAgainst {
		t.Errorf("an overlay equal to native routing: lean %q, want %q (%s)", got.lean, advise.LeanAgainst, got.text)
	}
	if !strings.Contains(got.text, "equal in 1") {
		t.Errorf("the overlay was not decided equal: %s", got.text)
	}
	gain["calico-vxlan"] = 0.8
	for i := range run.Samples {
		if run.Samples[i].Cell.Datapath == "calico-vxlan" {
			run.Samples[i].Metrics[results.MetricBitrate] *= 0.8
		}
	}
	if got := overlay(run, s); got.lean != advise.LeanFor {
		t.Errorf("an overlay worse than native routing: lean %q, want %q (%s)", got.lean, advise.LeanFor, got.text)
	}
}

// In rps-rfs, plain RPS worse than the baseline at 2 pairs beside RFS
// better everywhere leans for rfs: the candidate's lean is its RFS
// tunings'; it read "mixed" (a trade-off) from every steering tuning
// pooled, though no RFS cell was worse. RPS is still in the text, and a
// run of RPS alone leans as its RPS does.
func TestSteeringLeanIsRFSs(t *testing.T) {
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [{name: calico, type: calico-vxlan}]
  tunings:
    - baseline
    - {name: rps, rps: {cpus: all}}
    - {name: rfs, rps: {cpus: all}, rfs: {sockFlowEntries: 32768, flowCnt: 32768}}
  workloads: [{name: tcp, tool: iperf3, protocol: tcp}]
  replicas: [1, 2]
  trials: 3
  duration: 3s
`), study.Options{}, study.Catalog{Datapaths: []string{"calico-vxlan"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	stop := func(tn string, reps int, decision string, r float64) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: "calico", Tuning: tn, Workload: "tcp", Replicas: reps}, Metric: results.MetricBitrate,
			N: 3, Valid: 3, Decision: decision, Versus: "baseline", Ratio: &r, Low: &r, High: &r, Confidence: 0.95}
	}
	run := &results.Run{Stops: []results.Stop{stop("rps", 1, "equal", 1.0), stop("rps", 2, "worse", 0.93),
		stop("rfs", 1, "better", 1.08), stop("rfs", 2, "better", 1.1)}}
	got := steering(run, s)
	if got.lean != advise.LeanFor || !strings.Contains(got.text, "rps (RPS on") || !strings.Contains(got.text, "worse in 1") {
		t.Errorf("RPS worse at 2 pairs, RFS better: lean %q (%s), want %q with RPS named", got.lean, got.text, advise.LeanFor)
	}
	run.Stops[3] = stop("rfs", 2, "worse", 0.9)
	if got := steering(run, s); got.lean != advise.LeanMixed {
		t.Errorf("RFS better at 1 pair, worse at 2: lean %q, want %q", got.lean, advise.LeanMixed)
	}
	if got := steering(&results.Run{Stops: run.Stops[:2]}, s); got.lean != advise.LeanAgainst {
		t.Errorf("RPS alone, equal and worse: lean %q, want %q", got.lean, advise.LeanAgainst)
	}
}
