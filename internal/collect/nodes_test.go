package collect

import (
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
)

// A pinned node counts its own CPUs; an unpinned one every CPU.
func TestNodeBusy(t *testing.T) {
	w := metrics.Window{Cores: []results.CoreStat{
		{CPU: 0, CPUPercent: results.CPUPercent{Idle: 90, IOWait: 0}},
		{CPU: 1, CPUPercent: results.CPUPercent{Idle: 50, IOWait: 10}},
		{CPU: 2, CPUPercent: results.CPUPercent{Idle: 100}},
	}}
	for _, c := range []struct {
		cpus cpuset.Set
		want float64
	}{
		{nil, (10 + 40 + 0) / 3.0},
		{cpuset.Set{1}, 40},
		{cpuset.Set{0, 2}, 5},
	} {
		got, ok := nodeBusy(w, c.cpus)
		if !ok || got != c.want {
			t.Errorf("cpus %v: %v %v, want %v", c.cpus, got, ok, c.want)
		}
	}
	if _, ok := nodeBusy(w, cpuset.Set{7}); ok {
		t.Error("a node without sampled CPUs got a CPU %")
	}
}

// The qdisc metrics are the counters' growth over the window, summed
// over the impaired devices.
func TestQdiscDelta(t *testing.T) {
	start := []impair.Stats{{Packets: 10, Bytes: 1000, Drops: 1}, {Packets: 5}}
	end := []impair.Stats{{Packets: 110, Bytes: 9000, Drops: 6, Requeues: 2, Overlimits: 3}, {Packets: 25, Drops: 4}}
	m := qdiscDelta(start, end)
	want := map[string]float64{MetricQdiscPackets: 120, MetricQdiscBytes: 8000, MetricQdiscDrops: 9,
		MetricQdiscRequeues: 2, MetricQdiscOverlimits: 3}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}
