package collect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/iptables"
)

// saveNode prints out for any program, or fails to start it; it records
// whether the context it was given came from the collector's.
type saveNode struct {
	fakeNode
	name   string
	out    string
	err    error
	sawCtx *bool
	// saves answer the programs they name (iptables-legacy-save,
	// iptables-nft-save); any other of these is missing.
	saves map[string]string
}

// backendSave says whether argv is one backend's iptables-save.
func backendSave(argv []string) bool {
	return argv[0] == iptables.LegacySave || argv[0] == iptables.NftSave
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
	if backendSave(argv) {
		out, ok := n.saves[argv[0]]
		if !ok {
			return nil, errors.New("exec: " + argv[0] + ": executable file not found")
		}
		return doneProc{out: out}, nil
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

// A node whose kube-proxy writes legacy rules beside Docker's one rule in
// nf_tables (the image's default iptables-save) is counted from
// iptables-legacy-save at both ends of the window, and a warning, the
// same in every trial, says the other backend holds rules too. With the
// backends' own programs missing, the default iptables-save is read as
// before (TestRulesetWarns, TestRulesetCountsResets).
func TestRulesetIptablesBackend(t *testing.T) {
	legacy := func(pk int) string {
		return fmt.Sprintf("*mangle\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\n[%d:60] -A PREROUTING -j KUBE-SERVICES\nCOMMIT\n", pk)
	}
	nft := "*filter\n:FORWARD ACCEPT [0:0]\n[0:0] -A FORWARD -j DOCKER\nCOMMIT\n"
	var warnings []string
	for range 2 {
		saves := map[string]string{iptables.LegacySave: legacy(1), iptables.NftSave: nft}
		var ran []string
		n := &backendNode{saves: saves, ran: &ran}
		col, err := iptablesEntry.New(Trial{Cluster: saveCluster{server: n, client: n}})
		if err != nil {
			t.Fatal(err)
		}
		if err := col.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		saves[iptables.LegacySave] = legacy(9)
		r, err := col.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["iptables_path_rules_count"] != 2 { // server's and client's: one fake
			t.Errorf("metrics %v: want the legacy rule that counted on the path, on both nodes", r.Metrics)
		}
		if slices.Contains(ran, iptables.Save) || ran[len(ran)-1] != iptables.LegacySave {
			t.Errorf("ran %q: want the backends' own programs, the legacy one at the end", ran)
		}
		w := strings.Join(r.Warnings, "; ")
		if !strings.Contains(w, "collector iptables: node srv: iptables-nft-save holds rules too") || !strings.Contains(w, "iptables-legacy-save reads") {
			t.Errorf("warnings %q", r.Warnings)
		}
		warnings = append(warnings, w)
	}
	if warnings[0] != warnings[1] {
		t.Errorf("two trials warn differently, so the run repeats it: %q", warnings)
	}
}

// backendNode answers each iptables-save program from saves, and records
// which ran.
type backendNode struct {
	fakeNode
	saves map[string]string
	ran   *[]string
}

func (n *backendNode) Name() string { return "srv" }
func (n *backendNode) Start(_ context.Context, argv []string) (engine.Process, error) {
	*n.ran = append(*n.ran, argv[0])
	out, ok := n.saves[argv[0]]
	if !ok {
		return nil, errors.New("exec: " + argv[0] + ": executable file not found")
	}
	return doneProc{out: out}, nil
}

// seqNode prints its outputs in turn, one per program started: a rule
// set at the window's start, then at its end.
type seqNode struct {
	fakeNode
	outs *[]string
}

func (n seqNode) Name() string { return "srv" }
func (n seqNode) Start(_ context.Context, argv []string) (engine.Process, error) {
	if backendSave(argv) {
		return nil, errors.New("exec: " + argv[0] + ": executable file not found")
	}
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
