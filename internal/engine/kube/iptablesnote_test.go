package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
)

// env.json's iptables note says which backend's iptables-save read the
// node's rules, and that the other backend holds rules too: a node whose
// kube-proxy writes legacy rules read with the image's default nf_tables
// iptables-save counted nearly none, silently.
func TestDescribeIptablesBackend(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1", Image: "registry.example/cnibench:t"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: func(string, []string) (string, int) { return "", 1 }}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var e results.Env
	(&Engine{cfg: cfg}).Describe(engine.Run{ID: "r1", Study: stubStudy(t, "[{tool: iperf3}]")}, c, &e)
	want := "server node iptables (iptables-legacy-save; iptables-nft-save holds 3 rules too, not counted): 1 chains, 2 rules"
	if !slices.Contains(e.Notes, want) {
		t.Errorf("notes %q: want %q", e.Notes, want)
	}
	if got := iptablesNote(map[string]int{"chains": 4, "rules": 5}, ""); !strings.HasPrefix(got, "server node iptables: 4 chains") {
		t.Errorf("an agent that does not say: %q", got)
	}
}
