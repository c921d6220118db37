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

// A run of the baseline, rps and rfs on two datapaths: the baseline
// bound by one core on flannel (its busy core moving second by second),
// rps and rfs decided against the baseline from the run's stops. Find
// says both, with the run's numbers; a tuning that steers nothing is
// not steering.
func TestFind(t *testing.T) {
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [{name: flannel, type: flannel-vxlan}, bridge]
  tunings: [baseline, rps, rfs, {name: busy, sysctls: {net.core.busy_read: "50"}}]
  workloads: [{name: http, tool: ab, concurrency: [8]}]
  trials: 2
  duration: 3s
`), study.Options{}, study.Catalog{Datapaths: []string{"flannel-vxlan", "bridge"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	cell := func(dp, tn string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: tn, Workload: "http", Replicas: 1}
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := &results.Run{}
	for trial := 1; trial <= 2; trial++ {
		for _, dp := range []string{"flannel", "bridge"} {
			for _, tn := range []string{"baseline", "rps", "rfs", "busy"} {
				run.Samples = append(run.Samples, results.Sample{Cell: cell(dp, tn), Trial: trial, Metrics: map[string]float64{results.MetricRequests: 100}})
			}
		}
		for sec := range 3 {
			at := t0.Add(time.Duration(10*trial+sec) * time.Second)
			busy := sec % 2
			run.CPU = append(run.CPU,
				results.CPUPoint{Cell: cell("flannel", "baseline"), Trial: trial, Time: at, CPU: busy, CPUPercent: results.CPUPercent{Idle: 1, SoftIRQ: 74}},
				results.CPUPoint{Cell: cell("flannel", "baseline"), Trial: trial, Time: at, CPU: 1 - busy, CPUPercent: results.CPUPercent{Idle: 87}})
		}
	}
	ratio := func(v float64) *float64 { return &v }
	stop := func(c results.Cell, decision string, r, lo, hi float64) results.Stop {
		return results.Stop{Cell: c, Metric: results.MetricRequests, N: 2, Valid: 2, Decision: decision, Versus: "baseline",
			Ratio: ratio(r), Low: ratio(lo), High: ratio(hi), Confidence: 0.95}
	}
	run.Stops = []results.Stop{
		stop(cell("flannel", "rps"), "better", 1.454, 1.3, 1.6),
		stop(cell("bridge", "rps"), "undecided", 1.9, 0.8, 3),
		stop(cell("flannel", "rfs"), "better", 1.634, 1.5, 1.77),
		stop(cell("bridge", "rfs"), "better", 1.7, 1.6, 1.8),
		stop(cell("flannel", "busy"), "worse", 0.9, 0.85, 0.95),
	}
	got := Find("/runs/cc", run, s)
	// flannel against bridge too, on the stops' metric: equal in every
	// cell, which is against the overlay rules.
	if len(got) != 3 || got[0].Finding != advise.FindingOneCore || got[1].Finding != advise.FindingSteering || got[0].Run != "/runs/cc" ||
		got[2].Finding != advise.FindingOverlay || got[2].Lean != advise.LeanAgainst {
		t.Fatalf("sightings %+v", got)
	}
	if want := "1 of its 8 cells were bound by one core: flannel http baseline r=1 on the server node (a core 99% busy, 74% of it softirq, another 87% idle, in 2 of 2 trials)"; !strings.HasPrefix(got[0].Text, want) {
		t.Errorf("one-core:\n%s\nwant it to start\n%s", got[0].Text, want)
	}
	want := "rps (RPS on the underlay NIC, tunnel device and pods' veths) against baseline: better in 1, undecided in 1 of its cells " +
		"(flannel http rps r=1 requests_per_s ×1.45 [1.30, 1.60] at 95%, n=2); " +
		"rfs (RFS on the underlay NIC, tunnel device and pods' veths) against baseline: better in 2 of its cells " +
		"(flannel http rfs r=1 requests_per_s ×1.63 [1.50, 1.77] at 95%, n=2; bridge http rfs r=1 requests_per_s ×1.70 [1.60, 1.80] at 95%, n=2)"
	if got[1].Text != want {
		t.Errorf("steering:\n%s\nwant\n%s", got[1].Text, want)
	}
	// The cells it showed in, all of them (advise --prove narrows the
	// run's study to them): the bound one; the steering tunings' four.
	if c := got[0].Cells; len(c) != 1 || c[0] != cell("flannel", "baseline") {
		t.Errorf("one-core's cells %+v", c)
	}
	if c := got[1].Cells; len(c) != 4 || c[0] != cell("flannel", "rps") || c[3] != cell("bridge", "rfs") {
		t.Errorf("steering's cells %+v", c)
	}
	// Nothing bound, nothing steered: no sighting.
	if got := Find("/runs/x", &results.Run{Samples: run.Samples[:1]}, s); len(got) != 0 {
		t.Errorf("sightings of a run that shows nothing: %+v", got)
	}
}
