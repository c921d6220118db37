package collect

import (
	"context"
	"errors"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/study"
)

// CPU % and memory % of each node, the seed-003 paper's Table IV (which
// reports the client node's; we report both).
const (
	MetricNodeCPUClient    = "node_cpu_percent_client"
	MetricNodeCPUServer    = "node_cpu_percent_server"
	MetricNodeMemoryClient = "node_memory_percent_client"
	MetricNodeMemoryServer = "node_memory_percent_server"
)

var nodesEntry = Entry{
	Name: "nodes",
	Description: "CPU % (100 - idle - iowait, averaged over the node's CPUs) and memory % of the client and the server node over the window " +
		"(/proc/stat, /proc/meminfo). A node pinned to CPUs (spec.nodes.*.cpus) counts its own CPUs; emulated nodes that share the machine " +
		"count every CPU, so both nodes then show the machine's CPU %, and memory is always the machine's",
	Metrics: []string{MetricNodeCPUClient, MetricNodeCPUServer, MetricNodeMemoryClient, MetricNodeMemoryServer},
	Enabled: func(w study.Workload) bool { return w.Counters },
	New: func(t Trial) (Collector, error) {
		c := &nodesCollector{}
		for _, n := range []engine.Node{t.Cluster.Client(), t.Cluster.Server()} {
			k := t.Kernel(n)
			c.nodes = append(c.nodes, nodeSampler{k: k, s: k.CPU(), cpus: n.CPUs()})
		}
		return c, nil
	},
}

type nodeSampler struct {
	k    engine.Kernel
	s    engine.Sampler
	cpus cpuset.Set
}

type nodesCollector struct{ nodes []nodeSampler }

func (c *nodesCollector) Start(context.Context) error {
	for i, n := range c.nodes {
		if err := n.s.Start(); err != nil {
			for _, m := range c.nodes[:i] {
				m.s.Stop()
			}
			return err
		}
	}
	return nil
}

func (c *nodesCollector) Stop(context.Context) (Result, error) {
	cpu := []string{MetricNodeCPUClient, MetricNodeCPUServer}
	mem := []string{MetricNodeMemoryClient, MetricNodeMemoryServer}
	m := map[string]float64{}
	var errs []error
	for i, n := range c.nodes {
		w, err := n.s.Stop()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if pct, ok := nodeBusy(w, n.cpus); ok {
			m[cpu[i]] = pct
		}
		if pct, err := n.k.MemoryPercent(); err == nil {
			m[mem[i]] = pct
		}
	}
	return Result{Metrics: m}, errors.Join(errs...)
}

// nodeBusy is the average busy percentage of the node's CPUs over the
// window (every CPU when the node is not pinned).
func nodeBusy(w metrics.Window, cpus cpuset.Set) (float64, bool) {
	sum, n := 0.0, 0
	for _, c := range w.Cores {
		if len(cpus) > 0 && !cpus.Contains(c.CPU) {
			continue
		}
		sum += 100 - c.Idle - c.IOWait
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
