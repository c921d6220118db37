package collect

import (
	"context"

	"github.com/cnibench/cnibench/internal/engine"
)

var cpuEntry = Entry{
	Name: "cpu",
	Description: "per-core CPU time, NET_RX/NET_TX softirqs and softnet counters of the server node " +
		"(/proc/stat, /proc/softirqs, /proc/net/softnet_stat; emulated nodes share this machine's)",
	Metrics: []string{"cpu.jsonl", "cores in samples.jsonl"},
	Enabled: always,
	New: func(t Trial) (Collector, error) {
		return &cpuCollector{s: t.Kernel(t.Cluster.Server()).CPU()}, nil
	},
}

type cpuCollector struct{ s engine.Sampler }

func (c *cpuCollector) Start(context.Context) error { return c.s.Start() }

func (c *cpuCollector) Stop(context.Context) (Result, error) {
	w, err := c.s.Stop()
	if err != nil {
		return Result{}, err
	}
	return Result{CPU: &w}, nil
}
