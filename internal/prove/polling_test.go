package prove

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A cpu-idle A/B says what its gain cost: each side's cores' polling share
// per cell (mean over cores and trials), where either side polled; a
// cell where neither did, and an A/B on a kernel without polling times,
// say nothing of it.
func TestPollingCost(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline", Tunings: []study.Tuning{{Name: "baseline"}, {Name: "cpu-idle"}}}}
	var samples []results.Sample
	pct := func(v float64) *float64 { return &v }
	idle := results.CPUPercent{System: 10, Idle: 90}
	for trial := 1; trial <= 3; trial++ {
		for _, tn := range []string{"baseline", "cpu-idle"} {
			for _, reps := range []int{1, 4} {
				p0, p1 := 0.5, 1.5
				if tn == "cpu-idle" && reps == 1 {
					p0, p1 = 90, 80
				}
				if reps == 4 {
					p0, p1 = 0, 0.05
				}
				samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: tn, Workload: "rr", Replicas: reps}, Trial: trial,
					Metrics: map[string]float64{results.MetricTransactions: 1e4 * float64(trial)},
					// Measured cores: a core without percentages is one offline at
					// the window's end (results.CoreStat.Measured), whose poll
					// share is no measurement either.
					Cores: []results.CoreStat{{CPU: 0, CPUPercent: idle, Poll: pct(p0)}, {CPU: 1, CPUPercent: idle, Poll: pct(p1)}}})
			}
		}
	}
	m := analysis.Build(s, samples)
	got := polling(m, "baseline", "cpu-idle", true)
	if len(got) != 1 || got[0].Replicas != 1 || got[0].A != 1 || got[0].B != 85 || got[0].Datapath != "" {
		t.Fatalf("polling = %+v, want rr at 1 pair: 1%% with baseline, 85%% with cpu-idle", got)
	}
	p := &advise.Proof{A: "baseline", B: "cpu-idle", Metric: results.MetricTransactions, Polling: got,
		Cells: []advise.ProofCell{{Workload: "rr", Replicas: 1, N: 3, Decision: "better"}}}
	if txt := measured(p); !strings.Contains(txt, "spun in the polling idle state (counted as idle by the kernel, mean over its cores): rr at 1 pair(s) 1.0% with baseline, 85.0% with cpu-idle") {
		t.Errorf("measured %q", txt)
	}
	for i := range samples {
		for j := range samples[i].Cores {
			samples[i].Cores[j].Poll = nil
		}
	}
	if got := polling(analysis.Build(s, samples), "baseline", "cpu-idle", true); len(got) != 0 {
		t.Errorf("no polling measured: %+v", got)
	}
}
