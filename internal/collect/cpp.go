package collect

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// cppEntry's perf runs on the server node's kernel and samples every CPU
// of it (perf record -a): on the local engine that is the machine both
// emulated nodes share, so an inter-node workload's cost is both ends',
// as seed 004's inter-host numbers are; a cluster node's agent samples
// its own node, the receiver alone unless the nodes share a kernel
// (analysis.CPPOneNode notes it beside the paper's numbers).
var cppEntry = Entry{
	Name: "cpp",
	Description: "CPU cost per packet by kernel component, from perf samples of every CPU of the server node's kernel " +
		"over the window divided by the measured server pods' packets: on the local engine the machine both emulated " +
		"nodes share (both ends' cost), on a cluster the server node's agent's (that node alone, unless the nodes share a kernel)",
	Metrics:  []string{"cpp_*_cycles (sampling cycles)", "cpp_*_ns (sampling cpu-clock)"},
	Programs: []string{"perf"},
	Enabled:  func(w study.Workload) bool { return w.CPP },
	New: func(t Trial) (Collector, error) {
		srv := t.Cluster.Server()
		w, err := t.Kernel(srv).CPP(serverIfaces(t))
		if err != nil {
			return nil, err
		}
		return &cppCollector{w: w}, nil
	},
}

type cppCollector struct{ w engine.MetricWindow }

func (c *cppCollector) Start(ctx context.Context) error {
	if err := c.w.Start(ctx); err != nil {
		return fmt.Errorf("cpu cost per packet: %w", err)
	}
	return nil
}

// Stop ends perf's recording, inside every other collector's window.
func (c *cppCollector) Stop(ctx context.Context) (Result, error) {
	if err := c.w.Stop(ctx); err != nil {
		return Result{}, fmt.Errorf("cpu cost per packet: %w", err)
	}
	return Result{}, nil
}

// Finish computes the costs (perf report, on the server node) once every
// window has closed, the CPU sampler's too: the report's seconds at 100%
// of a core are not the trial's.
func (c *cppCollector) Finish(ctx context.Context) (Result, error) {
	m, err := c.w.Metrics(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("cpu cost per packet: %w", err)
	}
	return Result{Metrics: m}, nil
}
