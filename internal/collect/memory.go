package collect

import (
	"context"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// MetricMemory is the server node's memory in use at the end of the
// window, (MemTotal - MemAvailable) / MemTotal; emulated nodes share the
// machine's memory.
const MetricMemory = "node_memory_percent"

var memoryEntry = Entry{
	Name:        "memory",
	Description: "memory in use on the server node at the end of the window (/proc/meminfo; emulated nodes share this machine's)",
	Metrics:     []string{MetricMemory},
	Enabled:     func(w study.Workload) bool { return w.Counters },
	New: func(t Trial) (Collector, error) {
		return memory{k: t.Kernel(t.Cluster.Server())}, nil
	},
}

type memory struct{ k engine.Kernel }

func (memory) Start(context.Context) error { return nil }

// Stop leaves the metric out when the node's memory cannot be read.
func (c memory) Stop(context.Context) (Result, error) {
	pct, err := c.k.MemoryPercent()
	if err != nil {
		return Result{}, nil
	}
	return Result{Metrics: map[string]float64{MetricMemory: pct}}, nil
}
