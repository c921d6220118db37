package collect

import (
	"context"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
	"github.com/cnibench/cnibench/internal/metrics/nftables"
	"github.com/cnibench/cnibench/internal/study"
)

// The netfilter collectors run iptables-save and nft on each node through
// engine.Node.Start (the node's namespace, or its agent's container) at
// both ends of the window and count the chains and rules whose packet
// counters moved. A node where the program is missing or fails leaves
// the metrics out: a node need not run iptables or nftables.

var iptablesEntry = Entry{
	Name:        "iptables",
	Description: "iptables chains and rules packets traversed on both nodes over the window (`iptables-save -c`)",
	Metrics:     []string{"iptables_*"},
	Programs:    []string{"iptables-save"},
	Enabled:     func(w study.Workload) bool { return w.Counters },
	WholeTrial:  true,
	New: func(t Trial) (Collector, error) {
		return &ruleset[iptables.Ruleset]{
			nodes: bothNodes(t), argv: []string{"iptables-save", "-c"}, parse: iptables.Parse,
			metrics: func(before, after []*iptables.Ruleset) map[string]float64 {
				var tot iptables.Path
				for i := range after {
					p := iptables.Traversed(before[i], after[i])
					tot.Chains += p.Chains
					tot.Rules += p.Rules
					tot.TotalChains += p.TotalChains
					tot.TotalRules += p.TotalRules
				}
				return tot.Metrics()
			},
		}, nil
	},
}

var nftablesEntry = Entry{
	Name:        "nftables",
	Description: "nftables chains and rules packets traversed on both nodes over the window (`nft -j list ruleset`)",
	Metrics:     []string{"nft_*"},
	Programs:    []string{"nft"},
	Enabled:     func(w study.Workload) bool { return w.Counters },
	WholeTrial:  true,
	New: func(t Trial) (Collector, error) {
		return &ruleset[nftables.Ruleset]{
			nodes: bothNodes(t), argv: []string{"nft", "-j", "list", "ruleset"}, parse: nftables.Parse,
			metrics: func(before, after []*nftables.Ruleset) map[string]float64 {
				var tot nftables.Path
				for i := range after {
					tot = tot.Add(nftables.Traversed(before[i], after[i]))
				}
				return tot.Metrics()
			},
		}, nil
	},
}

func bothNodes(t Trial) []engine.Node {
	return []engine.Node{t.Cluster.Server(), t.Cluster.Client()}
}

// ruleset saves a rule set with its counters on every node.
type ruleset[T any] struct {
	nodes   []engine.Node
	argv    []string
	parse   func([]byte) (*T, error)
	metrics func(before, after []*T) map[string]float64
	before  []*T
}

func (c *ruleset[T]) Start(context.Context) error {
	c.before = c.save()
	return nil
}

func (c *ruleset[T]) Stop(context.Context) (Result, error) {
	after := c.save()
	if len(after) != len(c.nodes) || len(c.before) != len(c.nodes) {
		return Result{}, nil
	}
	return Result{Metrics: c.metrics(c.before, after)}, nil
}

// save runs argv on each node and parses its output; nil when any node
// fails.
func (c *ruleset[T]) save() []*T {
	var out []*T
	for _, n := range c.nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := n.Start(ctx, c.argv)
		if err != nil {
			cancel()
			return nil
		}
		b, _, err := p.Wait()
		cancel()
		if err != nil {
			return nil
		}
		rs, err := c.parse(b)
		if err != nil {
			return nil
		}
		out = append(out, rs)
	}
	return out
}
