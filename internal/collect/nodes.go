package collect

import (
	"context"
	"errors"
	"slices"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/study"
)

// CPU % and memory % of each node, the seed-003 paper's Table IV (which
// reports the client node's; we report both where they differ).
const (
	MetricNodeCPUClient    = "node_cpu_percent_client"
	MetricNodeCPUServer    = "node_cpu_percent_server"
	MetricNodeMemoryClient = "node_memory_percent_client"
	MetricNodeMemoryServer = "node_memory_percent_server"
)

var nodesEntry = Entry{
	Name: "nodes",
	Description: "CPU % (100 - idle - iowait, averaged over the node's CPUs online at the window's end) of the client and the server node over the window and " +
		"their memory in use at its end ((MemTotal - MemAvailable) / MemTotal), from /proc/stat and /proc/meminfo. A node pinned " +
		"to CPUs (spec.nodes.*.cpus) counts its own CPUs, an unpinned node of the local engine the CPUs cnibench may use (its cpuset), " +
		"a cluster's unpinned node all of its own. Nodes on one kernel (emulated nodes, a kind-style cluster's) share one " +
		"machine: its memory, and its CPUs unless pinned apart, are recorded once, under the client's names (the paper's Table IV " +
		"is the client node's), and the run notes it. On with counters: true, and for a background sweep (seed 004's Fig. 13c)",
	Metrics: []string{MetricNodeCPUClient, MetricNodeCPUServer, MetricNodeMemoryClient, MetricNodeMemoryServer},
	// A background sweep's too: seed 004 explains its measured flow's
	// drop past 400 connections by the nodes' CPU (Fig. 13c).
	Enabled: func(w study.Workload) bool { return w.Counters || w.Background != nil },
	New: func(t Trial) (Collector, error) {
		client, server := t.Cluster.Client(), t.Cluster.Server()
		c := &nodesCollector{shared: sharedNodes(t.SharedKernel, client.CPUs(), server.CPUs())}
		// The server's names stay empty where the client's reading is the
		// same one.
		srvCPU, srvMem := MetricNodeCPUServer, MetricNodeMemoryServer
		if c.shared.cpu {
			srvCPU = ""
		}
		if c.shared.memory {
			srvMem = ""
		}
		for _, n := range []struct {
			node             engine.Node
			cpuName, memName string
		}{{client, MetricNodeCPUClient, MetricNodeMemoryClient}, {server, srvCPU, srvMem}} {
			k := t.Kernel(n.node)
			s := nodeSampler{k: k, cpus: countedCPUs(n.node.CPUs(), t.Machine), cpuName: n.cpuName, memName: n.memName}
			if s.cpuName != "" {
				s.s = k.CPU()
			}
			c.nodes = append(c.nodes, s)
		}
		return c, nil
	},
}

// countedCPUs are the CPUs a node's CPU % averages over: those it is
// pinned to, else the CPUs the local engine's nodes share (machine:
// cnibench's cpuset), else (a cluster node, nil) every CPU its kernel
// has. Every CPU of this machine's /proc/stat counted, cnibench limited
// to 2 of 8 by its cgroup read 25% with both of its CPUs busy.
func countedCPUs(pinned, machine cpuset.Set) cpuset.Set {
	if len(pinned) > 0 {
		return pinned
	}
	return machine
}

// shared says what the two nodes' kernels would report alike: nodes on
// one kernel (the local engine's emulated nodes, a kind-style cluster's)
// read one /proc, so memory always, and CPU when both count the same
// CPUs (neither pinned, or pinned alike). Reading it twice would show two
// rows of one measurement as if they were two.
type shared struct{ cpu, memory bool }

func sharedNodes(oneKernel bool, client, server cpuset.Set) shared {
	return shared{cpu: oneKernel && slices.Equal(client, server), memory: oneKernel}
}

// note says what a shared machine's metrics are.
func (s shared) note() string {
	switch {
	case s.cpu:
		return "collector nodes: the client and server nodes run on one kernel and share its CPUs and memory, so " +
			"node_cpu_percent_client and node_memory_percent_client are the machine's and no _server rows are recorded " +
			"(on the local engine, pin the nodes apart, spec.nodes.*.cpus, for each node's CPU %)"
	case s.memory:
		return "collector nodes: the client and server nodes run on one kernel and share its memory, so " +
			"node_memory_percent_client is the machine's and no node_memory_percent_server is recorded"
	}
	return ""
}

// nodeSampler reads one node; an empty metric name is not recorded (the
// other node's reading covers it).
type nodeSampler struct {
	k                engine.Kernel
	s                engine.Sampler
	cpus             cpuset.Set
	cpuName, memName string
}

type nodesCollector struct {
	nodes  []nodeSampler
	shared shared
}

func (c *nodesCollector) Start(context.Context) error {
	for i, n := range c.nodes {
		if n.s == nil {
			continue
		}
		if err := n.s.Start(); err != nil {
			for _, m := range c.nodes[:i] {
				if m.s != nil {
					m.s.Stop()
				}
			}
			return err
		}
	}
	return nil
}

func (c *nodesCollector) Stop(context.Context) (Result, error) {
	m := map[string]float64{}
	var errs []error
	for _, n := range c.nodes {
		if n.s != nil {
			w, err := n.s.Stop()
			if err != nil {
				errs = append(errs, err)
			} else if pct, ok := nodeBusy(w, n.cpus); ok {
				m[n.cpuName] = pct
			}
		}
		if n.memName == "" {
			continue
		}
		if pct, err := n.k.MemoryPercent(); err == nil {
			m[n.memName] = pct
		}
	}
	r := Result{Metrics: m}
	if note := c.shared.note(); note != "" {
		r.Notes = []string{note}
	}
	return r, errors.Join(errs...)
}

// nodeBusy is the average busy percentage of the node's CPUs over the
// window (countedCPUs; every CPU when nil). A CPU offline at the
// window's end is left out: its percentages are zero, which 100 - idle
// would read as 100% busy.
func nodeBusy(w metrics.Window, cpus cpuset.Set) (float64, bool) {
	sum, n := 0.0, 0
	for _, c := range w.Online() {
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
