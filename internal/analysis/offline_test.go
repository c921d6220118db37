package analysis

import (
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// offlineTrials are three trials of one cell whose CPU 1 went offline
// before the end of the second: marked (Offline, as the sampler records
// it now) or, in a run from before the mark, with zero percentages
// alone. CPU 0 is 90% idle throughout.
func offlineTrials(marked bool) []results.Sample {
	cell := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	var out []results.Sample
	for trial := 1; trial <= 3; trial++ {
		cpu1 := results.CoreStat{CPU: 1, CPUPercent: results.CPUPercent{Idle: 70, SoftIRQ: 30}, NetRxPerSec: 100}
		if trial == 2 {
			cpu1 = results.CoreStat{CPU: 1, Offline: marked, NetRxPerSec: 40}
		}
		cores := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 90, User: 10}}, cpu1}
		out = append(out, results.Sample{Cell: cell, Trial: trial, Metrics: map[string]float64{results.MetricBitrate: 1e9},
			Cores: cores, ClientCores: cores})
	}
	return out
}

// A CPU offline at the window's end has zero percentages, which entered
// its rows as a trial at 0% idle (100% busy). It gives no value; its
// NET_RX rate, counted while it was online, stays.
func TestOfflineCoreGivesNoPercentages(t *testing.T) {
	for _, marked := range []bool{true, false} {
		idx := Index(Build(nil, offlineTrials(marked)).Rows)
		cell := offlineTrials(marked)[0].Cell
		for _, m := range []string{results.MetricCoreIdle, ClientCore(results.MetricCoreIdle)} {
			r := idx[Key{Cell: cell, Metric: m, CPU: 1}]
			if r.N != 2 || r.Mean != 70 {
				t.Errorf("marked %v: %s of cpu 1: %d trials, mean %v; want the 2 it was online at the end, 70", marked, m, r.N, r.Mean)
			}
		}
		if r := idx[Key{Cell: cell, Metric: results.MetricCoreNetRx, CPU: 1}]; r.N != 3 || r.Mean != 80 {
			t.Errorf("marked %v: NET_RX of cpu 1: %d trials, mean %v; want 3, 80", marked, r.N, r.Mean)
		}
	}
}

// Nor is a core offline at the end a core 100% busy beside an idle one:
// the trial was judged bound by one core.
func TestOneCoreLeavesOfflineOut(t *testing.T) {
	for _, marked := range []bool{true, false} {
		var samples []results.Sample
		for _, s := range offlineTrials(marked) {
			if s.Trial == 2 {
				s.Trial = 1
				samples = append(samples, s, s)
			}
		}
		for _, oc := range OneCoreTally(samples, nil, nil) {
			if oc.Bound != 0 {
				t.Errorf("marked %v: %s node bound by one core in %d of %d trials (%+v), by a CPU that was offline", marked, oc.Node, oc.Bound, oc.N, oc)
			}
		}
	}
}
