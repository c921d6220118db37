package collect

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// saveNode prints out for any program, or fails to start it; it records
// whether the context it was given came from the collector's.
type saveNode struct {
	fakeNode
	name   string
	out    string
	err    error
	sawCtx *bool
}

type ctxKey struct{}

func (n saveNode) Name() string { return n.name }
func (n saveNode) Start(ctx context.Context, argv []string) (engine.Process, error) {
	if n.sawCtx != nil && ctx.Value(ctxKey{}) == "trial" {
		*n.sawCtx = true
	}
	if n.err != nil {
		return nil, n.err
	}
	return doneProc{out: n.out}, nil
}

type doneProc struct{ out string }

func (p doneProc) Wait() ([]byte, []byte, error) { return []byte(p.out), nil, nil }
func (doneProc) Stop()                           {}

type saveCluster struct {
	fakeCluster
	server, client engine.Node
}

func (c saveCluster) Server() engine.Node { return c.server }
func (c saveCluster) Client() engine.Node { return c.client }

// A node whose rule set cannot be saved or read (a program missing, an
// iptables-save format the parser rejects) leaves the metrics out with a
// warning naming the collector, the node and why, not silently; the
// programs run under the trial's context.
func TestRulesetWarns(t *testing.T) {
	const saved = "*filter\n:INPUT ACCEPT [5:300]\n[3:180] -A INPUT -j ACCEPT\nCOMMIT\n"
	ctx := context.WithValue(context.Background(), ctxKey{}, "trial")
	for _, c := range []struct {
		name    string
		client  saveNode
		warning string
	}{
		{"both read", saveNode{name: "cli", out: saved}, ""},
		{"parser rejects", saveNode{name: "cli", out: "*filter\n:INPUT ACCEPT [5:300]\n-A INPUT -j ACCEPT\nCOMMIT\n"}, "node cli"},
		{"no program", saveNode{name: "cli", err: errors.New("exec: \"iptables-save\": executable file not found")}, "executable file not found"},
	} {
		saw := false
		srv := saveNode{name: "srv", out: saved, sawCtx: &saw}
		col, err := iptablesEntry.New(Trial{Cluster: saveCluster{server: srv, client: c.client}})
		if err != nil {
			t.Fatal(err)
		}
		if err := col.Start(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, err := col.Stop(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !saw {
			t.Errorf("%s: iptables-save ran without the trial's context", c.name)
		}
		w := strings.Join(r.Warnings, "; ")
		switch {
		case c.warning == "" && (w != "" || len(r.Metrics) == 0):
			t.Errorf("%s: metrics %v, warnings %q; want metrics and no warning", c.name, r.Metrics, w)
		case c.warning != "" && (len(r.Metrics) != 0 || len(r.Warnings) != 1 ||
			!strings.Contains(w, c.warning) || !strings.Contains(w, "collector iptables")):
			t.Errorf("%s: metrics %v, warnings %q; want none and one warning saying %q", c.name, r.Metrics, w, c.warning)
		}
	}
}

// seqNode prints its outputs in turn, one per program started: a rule
// set at the window's start, then at its end.
type seqNode struct {
	fakeNode
	outs *[]string
}

func (n seqNode) Name() string { return "srv" }
func (n seqNode) Start(context.Context, []string) (engine.Process, error) {
	out := (*n.outs)[0]
	*n.outs = (*n.outs)[1:]
	return doneProc{out: out}, nil
}

// A rule set rewritten during the trial restarts its counters (kube-proxy
// syncing): the rule that went back from 5000 to 200 is on the path, the
// resets are a metric, and the run is warned once, by one text.
func TestRulesetCountsResets(t *testing.T) {
	const start = "*nat\n:PREROUTING ACCEPT [0:0]\n[5000:300000] -A PREROUTING -j KUBE-SERVICES\nCOMMIT\n"
	const end = "*nat\n:PREROUTING ACCEPT [0:0]\n[200:12000] -A PREROUTING -j KUBE-SERVICES\nCOMMIT\n"
	var warnings []string
	for range 2 {
		outs := []string{start, start, end, start}
		n := seqNode{outs: &outs}
		col, err := iptablesEntry.New(Trial{Cluster: saveCluster{server: n, client: n}})
		if err != nil {
			t.Fatal(err)
		}
		if err := col.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		r, err := col.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["iptables_path_rules_count"] != 1 || r.Metrics["iptables_counter_resets_count"] != 1 {
			t.Errorf("metrics %v: want the reset rule on the path and 1 reset", r.Metrics)
		}
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "collector iptables: rule counters went back") {
			t.Errorf("warnings %q", r.Warnings)
		}
		warnings = append(warnings, r.Warnings...)
	}
	if len(warnings) == 2 && warnings[0] != warnings[1] {
		t.Errorf("two trials warn differently, so the run repeats it: %q", warnings)
	}
}
