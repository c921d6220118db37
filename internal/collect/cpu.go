package collect

import (
	"context"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
)

var cpuEntry = Entry{
	Name: "cpu",
	Description: "per-core CPU time, NET_RX softirqs (receive processing; transmit softirqs are not sampled) and softnet counters of the server node " +
		"(/proc/stat, /proc/softirqs, /proc/net/softnet_stat; emulated nodes share this machine's) and the time " +
		"each core spun in cpuidle's polling state, which /proc/stat counts as idle (sysfs cpuN/cpuidle/state0/time), " +
		"and of the client node when it runs its own kernel (a cluster's); the noise guard's steal_pct and client_steal_pct " +
		"(samples.jsonl noise, not compared) are these samples' steal time",
	Metrics: []string{"cpu.jsonl", "cores and client_cores in samples.jsonl"},
	Enabled: always,
	New: func(t Trial) (Collector, error) {
		c := &cpuCollector{s: t.Kernel(t.Cluster.Server()).CPU()}
		if !t.SharedKernel {
			c.client = t.Kernel(t.Cluster.Client()).CPU()
		}
		return c, nil
	},
}

// cpuCollector samples the server node's cores and, on a node with a
// kernel of its own, the client's: the sender's softirq work and the
// core rps-7 avoids at the client end.
type cpuCollector struct{ s, client engine.Sampler }

func (c *cpuCollector) Start(context.Context) error {
	if err := c.s.Start(); err != nil {
		return err
	}
	if c.client != nil {
		if err := c.client.Start(); err != nil {
			_, _ = c.s.Stop()
			return err
		}
	}
	return nil
}

func (c *cpuCollector) Stop(context.Context) (Result, error) {
	w, err := c.s.Stop()
	var cw metrics.Window
	var cerr error
	if c.client != nil {
		cw, cerr = c.client.Stop()
	}
	if err != nil {
		return Result{}, err
	}
	out := Result{CPU: &w}
	switch {
	case cerr != nil:
		out.Warnings = append(out.Warnings, "client node's cores not sampled: "+cerr.Error())
	case c.client != nil:
		out.Client = &cw
	}
	return out, nil
}
