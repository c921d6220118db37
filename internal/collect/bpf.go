package collect

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// The BPF programs cnibench loads count what they do in their own maps:
// which way the cilium datapath steered each packet, how many packets or
// connections it and the socket load balancer sent from a ClusterIP to a
// backend. No iptables counter moves for those, so without these a
// Service path through BPF would show only that no rule was met, not
// that the translation happened. Read like the rulesets, over the whole
// trial: the socket load balancer translates at connect(), in the warm-up.

// BPFPrefix starts the metric names of the bpf collector.
const BPFPrefix = "bpf_"

var bpfEntry = Entry{
	Name: "bpf",
	Description: "counters of the BPF programs cnibench loaded on the trial's path (the cilium datapath's steering and per-packet " +
		"Service translation, the socket load balancer's connect-time translation), summed over CPUs and nodes, over the trial; " +
		"left out where the path has none (every other datapath, the kube engine)",
	Metrics:    []string{BPFPrefix + "cilium_*_count", BPFPrefix + "socklb_*_count"},
	Enabled:    func(w study.Workload) bool { return w.Counters },
	WholeTrial: true,
	New:        func(t Trial) (Collector, error) { return &bpfCollector{srcs: t.Counters}, nil },
}

type bpfCollector struct {
	srcs   []engine.Counter
	before []map[string]uint64
}

func (c *bpfCollector) read() ([]map[string]uint64, error) {
	out := make([]map[string]uint64, len(c.srcs))
	for i, s := range c.srcs {
		m, err := s.Counts()
		if err != nil {
			return nil, fmt.Errorf("bpf counters: %w", err)
		}
		out[i] = m
	}
	return out, nil
}

func (c *bpfCollector) Start(context.Context) error {
	var err error
	c.before, err = c.read()
	return err
}

func (c *bpfCollector) Stop(context.Context) (Result, error) {
	after, err := c.read()
	if err != nil {
		return Result{}, err
	}
	return Result{Metrics: bpfDelta(c.before, after)}, nil
}

// bpfDelta is each counter's growth over the window, summed over the
// sources, as BPFPrefix+name. A counter that shrank was reloaded in
// between (its program's maps are new): its growth is unknown and it is
// left out rather than reported as a huge wrapped number.
func bpfDelta(before, after []map[string]uint64) map[string]float64 {
	out := map[string]float64{}
	bad := map[string]bool{}
	for i := range after {
		for k, v := range after[i] {
			b := before[i][k]
			if v < b {
				bad[k] = true
				continue
			}
			out[BPFPrefix+k] += float64(v - b)
		}
	}
	for k := range bad {
		delete(out, BPFPrefix+k)
	}
	return out
}
