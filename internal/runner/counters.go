package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/workload"
)

// countersWindow records, over the measured window, the packet and drop
// counters of the server node's underlay, tunnel and measured pods, and
// the iptables and nftables chains and rules packets traversed on the
// nodes. It wraps the node's CPU sampler like cppWindow. Device counters
// and memory are read through the node's reader (this kernel, or the
// node's agent); iptables-save and nft run on each node through
// engine.Node.Start (the node's namespace, or its agent's container).
type countersWindow struct {
	inner  cpuSampler
	rd     nodeReader
	groups []ifaceGroup
	nodes  []engine.Node

	pairs []workload.Pair

	before  [][]ifstats.Counters
	rules   []*iptables.Ruleset
	nft     []*nftables.Ruleset
	metrics map[string]float64
}

// ifaceGroup is a set of devices whose counters are summed under one name.
type ifaceGroup struct {
	name   string
	ifaces []netns.Iface
}

func newCountersWindow(inner cpuSampler, rd nodeReader, srv engine.Node, nodes []engine.Node, servers []engine.Pod, pairs []workload.Pair) *countersWindow {
	c := &countersWindow{inner: inner, rd: rd, nodes: nodes, pairs: pairs}
	c.groups = append(c.groups, ifaceGroup{"underlay", []netns.Iface{srv.Underlay()}})
	if t, ok := srv.Tunnel(); ok {
		c.groups = append(c.groups, ifaceGroup{"tunnel", []netns.Iface{t}})
	}
	var pods []netns.Iface
	for _, p := range servers {
		pods = append(pods, srv.PodIface(p))
	}
	c.groups = append(c.groups, ifaceGroup{"pods", pods})
	return c
}

// read reads every group's devices in one request (one agent round trip
// on kube, so both ends of the window are read close to its edges).
func (c *countersWindow) read() ([][]ifstats.Counters, error) {
	var all []netns.Iface
	for _, g := range c.groups {
		all = append(all, g.ifaces...)
	}
	flat, err := c.rd.ifaces(all)
	if err != nil {
		return nil, err
	}
	var out [][]ifstats.Counters
	for _, g := range c.groups {
		out = append(out, flat[:len(g.ifaces)])
		flat = flat[len(g.ifaces):]
	}
	return out, nil
}

// save runs argv on each node and parses its output; a node where the
// program is missing or fails gives nil (the metrics are then left out:
// a node need not run iptables or nftables).
func save[T any](nodes []engine.Node, argv []string, parse func([]byte) (*T, error)) []*T {
	var out []*T
	for _, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := n.Start(ctx, argv)
		if err != nil {
			cancel()
			return nil
		}
		b, _, err := p.Wait()
		cancel()
		if err != nil {
			return nil
		}
		rs, err := parse(b)
		if err != nil {
			return nil
		}
		out = append(out, rs)
	}
	return out
}

func (c *countersWindow) rulesets() ([]*iptables.Ruleset, []*nftables.Ruleset) {
	return save(c.nodes, []string{"iptables-save", "-c"}, iptables.Parse),
		save(c.nodes, []string{"nft", "-j", "list", "ruleset"}, nftables.Parse)
}

func (c *countersWindow) Start() error {
	if err := c.inner.Start(); err != nil {
		return err
	}
	var err error
	if c.before, err = c.read(); err != nil {
		_, _ = c.inner.Stop()
		return fmt.Errorf("interface counters: %w", err)
	}
	c.rules, c.nft = c.rulesets()
	return nil
}

func (c *countersWindow) Stop() (metrics.Window, error) {
	after, rerr := c.read()
	rules, nft := c.rulesets()
	w, err := c.inner.Stop()
	if err != nil {
		return w, err
	}
	if rerr != nil {
		return w, fmt.Errorf("interface counters: %w", rerr)
	}
	c.metrics = map[string]float64{}
	for i, g := range c.groups {
		var sum ifstats.Counters
		for j := range after[i] {
			d := ifstats.Delta(c.before[i][j], after[i][j])
			sum.RxPackets += d.RxPackets
			sum.TxPackets += d.TxPackets
			sum.RxDropped += d.RxDropped
			sum.TxDropped += d.TxDropped
		}
		pre := "if_" + g.name + "_"
		c.metrics[pre+"rx_packets_count"] = float64(sum.RxPackets)
		c.metrics[pre+"tx_packets_count"] = float64(sum.TxPackets)
		c.metrics[pre+"rx_dropped_count"] = float64(sum.RxDropped)
		c.metrics[pre+"tx_dropped_count"] = float64(sum.TxDropped)
	}
	if ms, ok := podSetupMs(c.pairs); ok {
		c.metrics[MetricPodSetup] = ms
	}
	if pct, err := c.rd.memoryPercent(); err == nil {
		c.metrics[MetricMemory] = pct
	}
	if len(rules) == len(c.nodes) && len(c.rules) == len(c.nodes) {
		var tot iptables.Path
		for i := range rules {
			p := iptables.Traversed(c.rules[i], rules[i])
			tot.Chains += p.Chains
			tot.Rules += p.Rules
			tot.TotalChains += p.TotalChains
			tot.TotalRules += p.TotalRules
		}
		for k, v := range tot.Metrics() {
			c.metrics[k] = v
		}
	}
	if len(nft) == len(c.nodes) && len(c.nft) == len(c.nodes) {
		var tot nftables.Path
		for i := range nft {
			tot = tot.Add(nftables.Traversed(c.nft[i], nft[i]))
		}
		for k, v := range tot.Metrics() {
			c.metrics[k] = v
		}
	}
	return w, nil
}

// Metrics of the counters window besides the interface counters.
const (
	// MetricPodSetup is the mean time to create and wire the network of
	// the measured pods (namespace plus datapath attach), when the engine
	// reports it.
	MetricPodSetup = "pod_setup_ms"
	// MetricMemory is the server node's memory in use at the end of the
	// window, (MemTotal - MemAvailable) / MemTotal; emulated nodes share
	// the machine's memory.
	MetricMemory = "node_memory_percent"
)

// setupTimer is implemented by pods that know how long their network
// took to set up (the local engine's pods).
type setupTimer interface{ SetupLatency() time.Duration }

func podSetupMs(pairs []workload.Pair) (float64, bool) {
	var sum time.Duration
	n := 0
	for _, p := range pairs {
		for _, pod := range []engine.Pod{p.Server, p.Client} {
			if st, ok := pod.(setupTimer); ok && st.SetupLatency() > 0 {
				sum += st.SetupLatency()
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(sum) / float64(n) / float64(time.Millisecond), true
}
