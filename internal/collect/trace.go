package collect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// The trace collector counts the netfilter path of the measured pairs'
// own packets (package nftrace), where the iptables and nftables
// collectors count whatever moved a counter on the nodes: on a real
// cluster the kubelet's and the API server's traffic too. It starts with
// the whole-trial collectors, so a connection's first packet, the only
// one the nat chains see, is traced, and stops tracing when the measured
// window begins: the warm-up's packets take the path the window's take,
// and the marking rules then cost the measured packets nothing. With a
// warm-up shorter than minTrace it traces to the end of the trial.

var traceEntry = Entry{
	Name: "trace",
	Description: "netfilter chains and rules the measured pairs' own packets traversed on both nodes (an nf_tables trace of " +
		"sampled packets between the pairs' addresses, `nft monitor trace`); left out where a node cannot trace",
	Metrics:    []string{"trace_*"},
	Programs:   []string{"nft"},
	Enabled:    func(w study.Workload) bool { return w.Counters },
	WholeTrial: true,
	New: func(t Trial) (Collector, error) {
		return &traceCollector{nodes: bothNodes(t), addrs: pairAddrs(t)}, nil
	},
}

// pairAddrs are the measured pairs' addresses: both pods', and the
// address clients connect to where it differs (a Service's ClusterIP).
func pairAddrs(t Trial) []netip.Addr {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(ip net.IP) {
		if a, ok := netip.AddrFromSlice(ip); ok && !seen[a.Unmap()] {
			seen[a.Unmap()] = true
			out = append(out, a.Unmap())
		}
	}
	for _, p := range append(append([]workload.Pair(nil), t.Pairs...), t.Driven...) {
		add(p.Client.IP())
		add(p.Server.IP())
		add(engine.AddrIP(p.Server))
	}
	return out
}

// minTrace is the least time traced before the window may end the trace.
const minTrace = time.Second

type traceCollector struct {
	nodes   []engine.Node
	addrs   []netip.Addr
	traces  []engine.Trace
	started time.Time
	done    map[string]float64 // the sum, once stopped at the window's start
	ended   bool
	// failed says why a node could not trace: the trial goes on without
	// the trace (its counters still count), and the run says why once.
	failed string
}

// Start traces on every node that can; a node that cannot (an engine
// without engine.Tracer, or a kernel without what the marking rules use)
// leaves the metrics out, with a warning in the second case. The nodes
// start together: each start waits for its monitor to subscribe, and a
// trial should not wait for them one after the other.
func (c *traceCollector) Start(ctx context.Context) error {
	if len(c.addrs) == 0 {
		return nil
	}
	tracers := make([]engine.Tracer, 0, len(c.nodes))
	for _, n := range c.nodes {
		tn, ok := n.(engine.Tracer)
		if !ok {
			return nil
		}
		tracers = append(tracers, tn)
	}
	traces := make([]engine.Trace, len(tracers))
	errs := make([]error, len(tracers))
	var wg sync.WaitGroup
	for i, tn := range tracers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			traces[i], errs[i] = tn.Trace(ctx, c.addrs)
		}()
	}
	wg.Wait()
	for i, tr := range traces {
		if errs[i] == nil {
			c.traces = append(c.traces, tr)
		}
	}
	for i, err := range errs {
		if err != nil {
			_, serr := c.stop()
			c.failed = fmt.Sprintf("collector trace: node %s cannot trace, so trace_path_* are not recorded: %v", c.nodes[i].Name(), err)
			return serr
		}
	}
	c.started = time.Now()
	return nil
}

// WindowStart ends the trace once it has run minTrace.
func (c *traceCollector) WindowStart(context.Context) error {
	if time.Since(c.started) < minTrace || c.ended {
		return nil
	}
	sum, err := c.stop()
	c.done, c.ended = sum, true
	return err
}

func (c *traceCollector) Stop(context.Context) (Result, error) {
	if c.failed != "" {
		return Result{Warnings: []string{c.failed}}, nil
	}
	sum, err := c.done, error(nil)
	if !c.ended {
		sum, err = c.stop()
	}
	if err != nil || sum == nil {
		return Result{}, err
	}
	r := Result{Metrics: sum}
	if sum[nftrace.MetricLost] > 0 {
		// One wording for every trial, so the run says it once.
		r.Warnings = []string{"collector trace: nft lost trace events (its socket overflowed), so trace_path_* may miss rules; " +
			nftrace.MetricLost + " counts the losses"}
	}
	return r, nil
}

// stop ends every trace started (together, as they started) and sums
// the paths when all nodes traced.
func (c *traceCollector) stop() (map[string]float64, error) {
	ms := make([]map[string]float64, len(c.traces))
	errs := make([]error, len(c.traces))
	var wg sync.WaitGroup
	for i, tr := range c.traces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i], errs[i] = tr.Stop()
		}()
	}
	wg.Wait()
	sum := map[string]float64{}
	for _, m := range ms {
		for k, v := range m {
			sum[k] += v
		}
	}
	complete := len(c.traces) == len(c.nodes)
	c.traces = nil
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if !complete {
		return nil, nil
	}
	return sum, nil
}
