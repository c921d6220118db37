package knob_test

import (
	"context"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelNetfilterKnobCalicoIPVS: Calico's chains with kube-proxy's
// IPVS mode on a calico-routed cluster. kube-ipvs0 is there, so Felix's
// IPVS rules are too; a client pod's connection to the measured
// Service still reaches the server pod, and on the client's node it
// walks Felix's IPVS path: cali-INPUT's forward check marks it with the
// pod's endpoint mark (cali-sm-<its device>), and after IPVS cali-OUTPUT
// sends it through the pod's egress chain by that mark. Undo leaves the
// tables as they were.
func TestKernelNetfilterKnobCalicoIPVS(t *testing.T) {
	kerneltest.RequireKernel(t, probe.IPVS)
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	cl, pairs := workloadtest.Cluster(t, "calico-routed", 1)
	ctx := context.Background()
	cliRun := netfilter.OnNode(cl.Client())
	before, err := netfilter.Snapshot(ctx, cliRun)
	if err != nil {
		t.Fatal(err)
	}
	dp := study.Datapath{Name: "calico", Type: "calico-routed", Netfilter: &study.Netfilter{CNI: "calico-np-xsub", KubeProxy: study.KubeProxyIPVS, Services: 3}}
	tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true,
		Journal: kerneltest.Journal(t, kerneltest.RunID()),
		Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
	pods, err := knob.Apply(ctx, knob.Pods, tg)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := netfilter.NodeOf(cl.Client(), []engine.Pod{pairs[0].Client})
	if err != nil {
		t.Fatal(err)
	}
	veth := cli.Pods[0].Iface

	tg.Workload = study.Workload{Name: "svc", Target: study.TargetService}
	tg.Measured, tg.MeasuredClients = []engine.Pod{pairs[0].Server}, []engine.Pod{pairs[0].Client}
	trial, err := knob.Apply(ctx, knob.Trial, tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.Front) != 1 {
		t.Fatalf("front %v", tg.Front)
	}
	cb, err := netfilter.Save(ctx, cliRun)
	if err != nil {
		t.Fatal(err)
	}
	reach(t, pairs[0].Server, pairs[0].Client, tg.Front[0], knob.BasePort)
	ca, err := netfilter.Save(ctx, cliRun)
	if err != nil {
		t.Fatal(err)
	}
	moved := netfilter.Traversed(cb, ca)
	for _, ch := range []string{"filter/cali-INPUT", "filter/cali-forward-check", "filter/cali-set-endpoint-mark", "filter/cali-sm-" + veth,
		"filter/cali-OUTPUT", "filter/cali-forward-endpoint-mark", "filter/cali-from-endpoint-mark", "filter/cali-fw-" + veth} {
		if !moved.Has(ch) {
			t.Errorf("client node: %s did not move; moved: %v", ch, moved.Chains)
		}
	}
	t.Logf("client node, pod to Service: %d chains, %d rules: %v", len(moved.Chains), len(moved.Rules), moved.Chains)
	if err := trial.Revert(); err != nil {
		t.Fatal(err)
	}
	if err := pods.Revert(); err != nil {
		t.Fatal(err)
	}
	after, err := netfilter.Snapshot(ctx, cliRun)
	if err != nil {
		t.Fatal(err)
	}
	if normalTables(string(after)) != normalTables(string(before)) {
		t.Errorf("client node's tables after undo:\n%s\nwant:\n%s", after, before)
	}
}
