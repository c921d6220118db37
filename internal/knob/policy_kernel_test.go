package knob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelPolicyKnob: on a calico-routed cluster the knob writes
// Felix's chains for the pods that exist; applied again for fewer pods
// (as the runner does per replica count) it keeps one set of FORWARD
// hooks, deletes the chains of the pod that went, and env counts what
// the node then holds, hooks included.
func TestKernelPolicyKnob(t *testing.T) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	cl, pairs := workloadtest.Cluster(t, "calico-routed", 2)
	ctx := context.Background()
	dp := study.Datapath{Name: "calico-wp", Type: "calico-routed", Policy: "wp"}
	env := &results.DatapathEnv{}
	state := map[string]any{}
	apply := func(n int) {
		t.Helper()
		tg := &knob.Target{Cluster: cl, Datapath: dp, Env: env, State: state}
		for _, p := range pairs[:n] {
			tg.Servers, tg.Clients = append(tg.Servers, p.Server), append(tg.Clients, p.Client)
		}
		a, err := knob.Apply(ctx, knob.Pods, tg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Revert(); err != nil {
			t.Fatal(err)
		}
	}
	apply(2)
	apply(1)
	out, err := netfilter.Snapshot(ctx, netfilter.OnNode(cl.Server()))
	if err != nil {
		t.Fatal(err)
	}
	chains, rules := 0, 0
	var fwd []string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, ":cali-"):
			chains++
		case strings.HasPrefix(l, "-A FORWARD "):
			fwd = append(fwd, l)
			rules++
		case strings.HasPrefix(l, "-A cali-"):
			rules++
		}
	}
	if len(fwd) != 3 || fwd[0] != "-A FORWARD -j cali-FORWARD" {
		t.Errorf("FORWARD after two applies:\n%s\nwant the jump to cali-FORWARD first and Felix's accept and mark, once", strings.Join(fwd, "\n"))
	}
	if p := env.Policy; p == nil || p.Chains["server"] != chains || p.Rules["server"] != rules {
		t.Errorf("env %+v; the server node holds %d cali chains and %d rules in them and FORWARD", env.Policy, chains, rules)
	}
	gone, err := cl.Server().HostVeths([]engine.Pod{pairs[1].Server})
	if err != nil {
		t.Fatal(err)
	}
	if name := "cali-tw-" + gone[0].Name; strings.Contains(string(out), ":"+name+" ") {
		t.Errorf("chain %s of the pod no longer there is left", name)
	}
}
