package collect

import (
	"context"
	"fmt"
	"strings"
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
// the metrics out (a node need not run iptables or nftables), and the run
// says why once.

var iptablesEntry = Entry{
	Name:        "iptables",
	Description: "iptables chains and rules packets traversed on both nodes over the window (`iptables-save -c`)",
	Metrics:     []string{"iptables_*"},
	Programs:    []string{"iptables-save"},
	Enabled:     func(w study.Workload) bool { return w.Counters },
	WholeTrial:  true,
	New: func(t Trial) (Collector, error) {
		return &ruleset[iptables.Ruleset]{
			name: "iptables", what: "iptables_*", resets: iptables.MetricResets,
			nodes: bothNodes(t), argv: []string{iptables.Save, "-c"}, parse: iptables.Parse, pick: pickIptables,
			metrics: func(before, after []*iptables.Ruleset) (map[string]float64, int) {
				var tot iptables.Path
				for i := range after {
					tot = tot.Add(iptables.Traversed(before[i], after[i]))
				}
				return tot.Metrics(), tot.Resets
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
			name: "nftables", what: "nft_*", resets: nftables.MetricResets,
			nodes: bothNodes(t), argv: []string{"nft", "-j", "list", "ruleset"}, parse: nftables.Parse,
			metrics: func(before, after []*nftables.Ruleset) (map[string]float64, int) {
				var tot nftables.Path
				for i := range after {
					tot = tot.Add(nftables.Traversed(before[i], after[i]))
				}
				return tot.Metrics(), tot.Resets
			},
		}, nil
	},
}

func bothNodes(t Trial) []engine.Node {
	return []engine.Node{t.Cluster.Server(), t.Cluster.Client()}
}

// ruleset saves a rule set with its counters on every node. A node where
// it cannot (the program missing or failing, output its parser rejects,
// as a new iptables-save or nft format would be) leaves the metrics out
// and says why in a warning, which the runner reports once; so does a
// trial whose counters went back (resetWarning).
type ruleset[T any] struct {
	name   string // the collector's, for the warning
	what   string // the metrics left out ("iptables_*")
	resets string // the metric of the counters that went back
	nodes  []engine.Node
	argv   []string
	parse  func([]byte) (*T, error)
	// metrics compares the two reads of every node: the metrics, and how
	// many counters went back (restarted by a rewrite of their rules).
	metrics func(before, after []*T) (map[string]float64, int)
	// pick, where set, chooses a node's program at the window's start,
	// from what it reads itself (out, kept as that read where not nil),
	// and says what it leaves out: iptables' backend, pickIptables.
	pick   func(ctx context.Context, n engine.Node, run func(context.Context, engine.Node, []string) ([]byte, error)) (argv []string, out []byte, warning string)
	argvs  map[string][]string // by node, what pick chose
	picked []string            // pick's warnings
	before []*T
	failed error
}

func (c *ruleset[T]) Start(ctx context.Context) error {
	c.before, c.failed = c.save(ctx)
	return nil
}

func (c *ruleset[T]) Stop(ctx context.Context) (Result, error) {
	if c.failed != nil {
		return c.leftOut(ctx, c.failed), nil
	}
	after, err := c.save(ctx)
	if err != nil {
		return c.leftOut(ctx, err), nil
	}
	m, resets := c.metrics(c.before, after)
	r := Result{Metrics: m, Warnings: c.picked}
	if resets > 0 {
		r.Warnings = []string{c.resetWarning()}
	}
	return r, nil
}

// resetWarning says that counters went back in a trial: the same text
// every time, so that the runner reports it once.
func (c *ruleset[T]) resetWarning() string {
	return fmt.Sprintf("collector %s: rule counters went back during a trial: the rules were rewritten (as kube-proxy's "+
		"iptables-restore or nft -f does when it syncs), which restarts their counters; such a rule counts as traversed "+
		"when it counted after the restart, and one that counted only before it is missed (%s says how many restarted "+
		"in each trial)", c.name, c.resets)
}

// leftOut is the result without metrics: a warning naming why, unless
// the trial itself was cancelled (no node is to blame then).
func (c *ruleset[T]) leftOut(ctx context.Context, err error) Result {
	if ctx.Err() != nil {
		return Result{}
	}
	return Result{Warnings: []string{fmt.Sprintf("collector %s: %s are not recorded: %v", c.name, c.what, err)}}
}

// save runs argv on each node and parses its output.
func (c *ruleset[T]) save(ctx context.Context) ([]*T, error) {
	out := make([]*T, 0, len(c.nodes))
	for _, n := range c.nodes {
		rs, err := c.saveOn(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name(), err)
		}
		out = append(out, rs)
	}
	return out, nil
}

func (c *ruleset[T]) saveOn(ctx context.Context, n engine.Node) (*T, error) {
	argv, b := c.argv, []byte(nil)
	if c.pick != nil {
		if c.argvs == nil {
			c.argvs = map[string][]string{}
		}
		if c.argvs[n.Name()] == nil {
			var warning string
			c.argvs[n.Name()], b, warning = c.pick(ctx, n, run)
			if warning != "" {
				c.picked = append(c.picked, fmt.Sprintf("collector %s: node %s: %s", c.name, n.Name(), warning))
			}
		}
		argv = c.argvs[n.Name()]
	}
	cmd := strings.Join(argv, " ")
	if b == nil {
		var err error
		if b, err = run(ctx, n, argv); err != nil {
			return nil, err
		}
	}
	rs, err := c.parse(b)
	if err != nil {
		return nil, fmt.Errorf("read %s output: %w", cmd, err)
	}
	return rs, nil
}

// run runs argv on n and returns its output.
func run(ctx context.Context, n engine.Node, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := strings.Join(argv, " ")
	p, err := n.Start(ctx, argv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	b, _, err := p.Wait()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return b, nil
}
