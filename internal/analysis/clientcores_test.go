package analysis

import (
	"math"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A client node's own cores become client_core_* rows of their own cores,
// per core like the server's, with the same unit and bound; a group says
// which cores each metric has.
func TestSummarizeClientCores(t *testing.T) {
	var samples []results.Sample
	for trial := 1; trial <= 3; trial++ {
		samples = append(samples, results.Sample{
			Cell:        results.Cell{Datapath: "calico-vxlan", Tuning: "baseline", Workload: "tcp", Replicas: 1},
			Trial:       trial,
			Metrics:     map[string]float64{results.MetricBitrate: 9e9},
			Cores:       []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 20}}},
			ClientCores: []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 99}}, {CPU: 3, CPUPercent: results.CPUPercent{Idle: 97 + float64(trial)}}},
		})
	}
	rows := Summarize(nil, samples)
	idle := ClientCore(results.MetricCoreIdle)
	r := find(t, rows, "baseline", 1, idle, 3)
	if r.N != 3 || r.Mean != 99 || r.Unit != "%" || r.CI95High > 100 {
		t.Errorf("client core 3 idle: n %d, mean %v, unit %q, CI high %v; want 3, 99, %%, at most 100", r.N, r.Mean, r.Unit, r.CI95High)
	}
	if s := find(t, rows, "baseline", 1, results.MetricCoreIdle, 0); s.Mean != 20 {
		t.Errorf("server core 0 idle %v, want 20", s.Mean)
	}
	if !IsCoreMetric(idle) || IsCoreMetric("client_bitrate") || UpperBound(idle) != 100 || !math.IsInf(UpperBound("client_bitrate"), 1) {
		t.Error("client_core_idle not a per-core share, or client_bitrate taken for one")
	}
	g := Groups(rows)[0]
	if got := g.CPUsOf(idle); len(got) != 2 || got[1] != 3 {
		t.Errorf("client idle cores %v, want [0 3]", got)
	}
	if got := g.CPUsOf(results.MetricCoreIdle); len(got) != 1 {
		t.Errorf("server idle cores %v, want [0]", got)
	}
}
