package collect

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

var cppEntry = Entry{
	Name: "cpp",
	Description: "CPU cost per packet on the server node by kernel component, from perf samples " +
		"over the window divided by the measured pods' packets (this machine's perf, or the node agent's)",
	Metrics:  []string{"cpp_*_UNIT (UNIT: the perf event's, cycles or ns)"},
	Programs: []string{"perf"},
	Enabled:  func(w study.Workload) bool { return w.CPP },
	New: func(t Trial) (Collector, error) {
		srv := t.Cluster.Server()
		var ifaces []netns.Iface
		for _, p := range t.Servers {
			ifaces = append(ifaces, srv.PodIface(p))
		}
		w, err := t.Kernel(srv).CPP(ifaces)
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

func (c *cppCollector) Stop(ctx context.Context) (Result, error) {
	m, err := c.w.Stop(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("cpu cost per packet: %w", err)
	}
	return Result{Metrics: m}, nil
}
