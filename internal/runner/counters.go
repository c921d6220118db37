package runner

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/workload"
)

// countersWindow records, over the measured window, the packet and drop
// counters of the server node's underlay, tunnel and measured pods, and
// the iptables chains and rules packets traversed on the nodes. It wraps
// the node's CPU sampler like cppWindow.
type countersWindow struct {
	inner  cpuSampler
	groups []ifaceGroup
	nodes  []engine.Node

	pairs []workload.Pair

	before  [][]ifstats.Counters
	rules   []*iptables.Ruleset
	metrics map[string]float64
}

// ifaceGroup is a set of devices whose counters are summed under one name.
type ifaceGroup struct {
	name   string
	ifaces []engine.Iface
}

func newCountersWindow(inner cpuSampler, srv engine.Node, nodes []engine.Node, servers []engine.Pod, pairs []workload.Pair) *countersWindow {
	c := &countersWindow{inner: inner, nodes: nodes, pairs: pairs}
	c.groups = append(c.groups, ifaceGroup{"underlay", []engine.Iface{srv.Underlay()}})
	if t, ok := srv.Tunnel(); ok {
		c.groups = append(c.groups, ifaceGroup{"tunnel", []engine.Iface{t}})
	}
	var pods []engine.Iface
	for _, p := range servers {
		pods = append(pods, srv.PodIface(p))
	}
	c.groups = append(c.groups, ifaceGroup{"pods", pods})
	return c
}

func (c *countersWindow) read() ([][]ifstats.Counters, error) {
	var out [][]ifstats.Counters
	for _, g := range c.groups {
		var cs []ifstats.Counters
		for _, ifc := range g.ifaces {
			v, err := ifstats.Read(ifc)
			if err != nil {
				return nil, err
			}
			cs = append(cs, v)
		}
		out = append(out, cs)
	}
	return out, nil
}

// iptablesSave runs iptables-save -c in each node; a node without iptables
// gives nil (the metrics are then left out).
func (c *countersWindow) iptablesSave() []*iptables.Ruleset {
	var out []*iptables.Ruleset
	for _, n := range c.nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := n.Start(ctx, []string{"iptables-save", "-c"})
		if err != nil {
			cancel()
			return nil
		}
		b, _, err := p.Wait()
		cancel()
		if err != nil {
			return nil
		}
		rs, err := iptables.Parse(b)
		if err != nil {
			return nil
		}
		out = append(out, rs)
	}
	return out
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
	c.rules = c.iptablesSave()
	return nil
}

func (c *countersWindow) Stop() (metrics.Window, error) {
	after, rerr := c.read()
	rules := c.iptablesSave()
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
	if pct, err := memoryPercent("/proc/meminfo"); err == nil {
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
	return w, nil
}

// Metrics of the counters window besides the interface counters.
const (
	// MetricPodSetup is the mean time to create and wire the network of
	// the measured pods (namespace plus datapath attach), when the engine
	// reports it.
	MetricPodSetup = "pod_setup_ms"
	// MetricMemory is the machine's memory in use at the end of the
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

// memoryPercent reads MemTotal and MemAvailable from a meminfo file.
func memoryPercent(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var total, avail float64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail = v
		}
	}
	if total <= 0 {
		return 0, fmt.Errorf("%s: no MemTotal", path)
	}
	return 100 * (total - avail) / total, nil
}
