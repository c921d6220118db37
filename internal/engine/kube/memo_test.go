package kube

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
)

// Preflights sharing a Memo (doctor's) ask each node's agent only what no
// earlier one asked, and each still decides from the answers to its own
// questions: the same question again opens no session, a new feature is
// the only one probed, and a missing feature refuses the preflight whose
// study needs it, not the others. Without a Memo every preflight asks.
func TestMemoAsksOnce(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	setCPUs(fs, 4, func(cpu int) (int, int) { return 0, cpu })
	asked := map[string][][]string{}
	fx := &fakeExec{fs: fs, dir: t.TempDir(), features: func(pod string, names []string) map[string]string {
		asked[pod] = append(asked[pod], slices.Clone(names))
		if pod == "agent-b" && slices.Contains(names, probe.Netem) {
			return map[string]string{probe.Netem: "kernel lacks the sch_netem module"}
		}
		return nil
	}}
	rfs := []engine.Need{{What: "tuning rfs", Features: []string{probe.RFS}}}
	netem := []engine.Need{{What: "tuning rfs", Features: []string{probe.RFS}}, {What: "impairment loss-low", Features: []string{probe.Netem}}}
	sessions := func() int { return len(fx.argvs) }

	cfg.Memo = &Memo{}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, rfs, pinReads{allowed: true, topology: true})
	if err != nil || nf.refused != nil || nf.topo == nil || len(nf.topo.CPUs) != 4 || nf.cni.Name == "" {
		t.Fatalf("first preflight: %v, refused %+v, topology %+v, cni %+v", err, nf.refused, nf.topo, nf.cni)
	}
	first := sessions()
	again, err := preflightNodes(context.Background(), fx, cs, cfg, place, rfs, pinReads{allowed: true, topology: true})
	if err != nil || sessions() != first || again.topo == nil || fmt.Sprint(*again.topo) != fmt.Sprint(*nf.topo) || fmt.Sprint(again.cni) != fmt.Sprint(nf.cni) {
		t.Errorf("the same preflight again: %v, %d more sessions, facts %+v want %+v", err, sessions()-first, again, nf)
	}
	nf, err = preflightNodes(context.Background(), fx, cs, cfg, place, netem, pinReads{})
	if err != nil || nf.refused == nil || nf.refused.node != "w2" || nf.topo != nil {
		t.Fatalf("a study needing netem: %v, refused %+v, topology %+v (this study pins nothing)", err, nf.refused, nf.topo)
	}
	if want := [][]string{{probe.RFS}, {probe.Netem}}; fmt.Sprint(asked["agent-a"]) != fmt.Sprint(want) || fmt.Sprint(asked["agent-b"]) != fmt.Sprint(want) {
		t.Errorf("probes asked %v, want each node asked rfs, then netem alone", asked)
	}
	nf, err = preflightNodes(context.Background(), fx, cs, cfg, place, rfs, pinReads{})
	if err != nil || nf.refused != nil {
		t.Errorf("rfs alone after netem was found missing: %v, refused %+v", err, nf.refused)
	}

	// The online CPUs, which RPS masks span, come with every node's
	// answers, the memo's too.
	for _, n := range []string{"w1", "w2"} {
		if got := nf.online[n].String(); got != "0-3" {
			t.Errorf("with a Memo, node %s's online CPUs %q, want 0-3 (not 0..capacity-1 by default)", n, got)
		}
	}

	// A study needing nothing of the client node: its agent is still
	// asked, once, for them.
	cfg.Memo = &Memo{}
	for range 2 {
		if nf, err = preflightNodes(context.Background(), fx, cs, cfg, place, nil, pinReads{}); err != nil || nf.online["w2"].String() != "0-3" {
			t.Errorf("nothing wanted, with a Memo: %v, online CPUs %v", err, nf.online)
		}
	}

	cfg.Memo = nil
	n := sessions()
	for range 2 {
		if _, err := preflightNodes(context.Background(), fx, cs, cfg, place, rfs, pinReads{}); err != nil {
			t.Fatal(err)
		}
	}
	if sessions()-n != 4 {
		t.Errorf("without a Memo: %d sessions for two preflights of two nodes, want 4", sessions()-n)
	}
}
