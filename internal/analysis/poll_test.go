package analysis

import (
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// Polling time is a per-core share like idle where the cores have it,
// and makes no rows where none of a cell's trials measured it (a kernel
// without a cpuidle driver): an empty row would read as "0 trials".
func TestSummarizeCorePoll(t *testing.T) {
	poll := func(v float64) *float64 { return &v }
	var samples []results.Sample
	for trial := 1; trial <= 3; trial++ {
		for _, tn := range []string{"baseline", "cpu-idle"} {
			cores := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 90}}}
			if tn == "cpu-idle" {
				cores[0].Poll = poll(80 + float64(trial))
			}
			samples = append(samples, results.Sample{
				Cell:  results.Cell{Datapath: "bridge", Tuning: tn, Workload: "rr", Replicas: 1},
				Trial: trial, Metrics: map[string]float64{results.MetricTransactions: 1e4}, Cores: cores,
			})
		}
	}
	rows := Summarize(nil, samples)
	r := find(t, rows, "cpu-idle", 1, results.MetricCorePoll, 0)
	if r.N != 3 || r.Mean != 82 || r.Unit != "%" || r.CI95High > 100 {
		t.Errorf("cpu-idle core 0 polling: n %d, mean %v, unit %q, high %v", r.N, r.Mean, r.Unit, r.CI95High)
	}
	for _, r := range rows {
		if r.Tuning == "baseline" && r.Metric == results.MetricCorePoll {
			t.Errorf("baseline has a polling row without a measurement: %+v", r)
		}
	}
	if !IsCoreMetric(results.MetricCorePoll) || UpperBound(results.MetricCorePoll) != 100 {
		t.Error("core_poll is not a per-core share bounded by 100")
	}
}
