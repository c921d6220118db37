package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// Impairments run on kube through the agents: checkStudy lets them
// through, and preflight asks each node's agent for netem.
func TestKubeAcceptsImpairments(t *testing.T) {
	s := stubStudy(t, "[{tool: iperf3}]")
	s.Spec.Impairments = []study.Impairment{{Name: "none"}, {Name: "loss-low"}}
	if err := checkStudy(s); err != nil {
		t.Errorf("impaired study on kube: %v", err)
	}
}

// A node whose kernel lacks netem stops the run at preflight with one
// line naming the node, the feature, its reason and the impairments it
// would have served, before any pod or Lease exists; nodes that have it
// pass, RFS is asked of the nodes too, and needs without kernel
// features probe nothing.
func TestNodeFeaturesThroughAgents(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	needs := []engine.Need{
		{What: "tuning rfs+", Features: []string{probe.RFS}},
		{What: "impairments delay-low and 3 more at client-tunnel egress", Of: []string{"flannel-vxlan", "flannel-udp"}, Features: []string{probe.Netem}},
	}
	asked := map[string][]string{}
	cs, place := kubeFixture(t, cfg)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), features: func(pod string, names []string) map[string]string {
		asked[pod] = names
		if pod == "agent-b" {
			return map[string]string{probe.Netem: "adding a netem qdisc failed: no such file or directory (kernel lacks the sch_netem module)"}
		}
		return nil
	}}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, needs, pinReads{})
	if err != nil || nf.refused == nil {
		t.Fatalf("want a refusal, got %v and %+v", err, nf.refused)
	}
	// The refusal names the datapath the engine picked, not the study's
	// list the runner made the need with.
	err = nf.refused.refuse([]string{"flannel-vxlan"})
	if !errors.Is(err, probe.ErrUnsupported) {
		t.Fatalf("want an unsupported-feature error, got %v", err)
	}
	if strings.Contains(err.Error(), "flannel-udp") {
		t.Errorf("error %q names a datapath the run would not measure", err)
	}
	for _, w := range []string{"impairments delay-low and 3 more at client-tunnel egress of flannel-vxlan: node w2", "netem", "sch_netem"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
	if got := asked["agent-a"]; len(got) != 2 || !slices.Contains(got, probe.Netem) || !slices.Contains(got, probe.RFS) {
		t.Errorf("server agent asked %v, want rfs and netem", asked)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			t.Errorf("preflight created a %s", a.GetResource().Resource)
		}
	}

	fx.features = func(string, []string) map[string]string { return nil }
	if nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, needs, pinReads{}); err != nil || nf.idle != nil || nf.refused != nil {
		t.Errorf("nodes with netem: %v, refused %+v (idle states %v: no tuning bounds idle)", err, nf.refused, nf.idle)
	}
	// Without a kernel feature to probe, each node's agent is asked for
	// its online CPUs (and the server's for the CNI), and nothing is
	// probed.
	n := len(fx.argvs)
	asked = map[string][]string{}
	fx.features = func(pod string, names []string) map[string]string { asked[pod] = names; return nil }
	if _, err := preflightNodes(context.Background(), fx, cs, cfg, place, []engine.Need{{What: "tuning baseline"}}, pinReads{}); err != nil || len(fx.argvs) != n+2 || len(asked) != 0 {
		t.Errorf("no kernel feature needed: %v, %d agent sessions opened, probes %v", err, len(fx.argvs)-n, asked)
	}
}

// A tuning that bounds idle has each node's agent read CPU 0's idle
// states at preflight, keyed by node, for the runner's check of the
// bound; a node without them (the feature check refuses it) has none.
func TestNodeIdleStatesThroughAgents(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	for p, v := range map[string]string{
		"cpu0/cpuidle/state0/name": "POLL", "cpu0/cpuidle/state0/latency": "0",
		"cpu0/cpuidle/state1/name": "C1E", "cpu0/cpuidle/state1/latency": "10",
	} {
		fs.set("", "sysfs", cpuidle.Dir+"/"+p, v)
	}
	fx := &fakeExec{fs: fs, dir: t.TempDir()}
	needs := []engine.Need{{What: "tuning poll", Features: []string{probe.CPUIdle}}}
	nf, err := preflightNodes(context.Background(), fx, cs, cfg, place, needs, pinReads{})
	if err != nil {
		t.Fatal(err)
	}
	idle := nf.idle
	if len(idle) != 2 || idle[0].Where != "node w1's" || len(idle[0].States) != 2 || idle[1].States[1].Name != "C1E" || idle[1].States[1].LatencyUS != 10 {
		t.Fatalf("idle states %+v, want both nodes' POLL and C1E", idle)
	}
	// Each node says which end it holds: the fixture's server is w1.
	if !slices.Equal(idle[0].Sides, []string{study.SideServer}) || !slices.Equal(idle[1].Sides, []string{study.SideClient}) {
		t.Errorf("sides %v and %v, want server on w1 and client on w2", idle[0].Sides, idle[1].Sides)
	}
}
