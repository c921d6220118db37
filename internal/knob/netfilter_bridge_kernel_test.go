package knob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelNetfilterKnobBridgeDevice: kube-router's FORWARD accepts
// name the bridge the datapath's pods hang off. On the bridge datapath
// (docs/netfilter.md's "Kube-router (bridge)" row) that is cni0, not the
// kube-bridge its rules would otherwise wait for and never meet; on
// calico-routed, whose pods hang off no bridge, the knob refuses the
// pair instead of installing rules no packet matches.
func TestKernelNetfilterKnobBridgeDevice(t *testing.T) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		datapath string
		fits     bool
	}{{"bridge", true}, {"calico-routed", false}} {
		t.Run(c.datapath, func(t *testing.T) {
			cl, pairs := workloadtest.Cluster(t, c.datapath, 1)
			dp := study.Datapath{Name: c.datapath + "-kr", Type: c.datapath, Netfilter: &study.Netfilter{CNI: "kube-router", KubeProxy: study.KubeProxyNone}}
			tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true,
				Journal: kerneltest.Journal(t, kerneltest.RunID()),
				Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
			a, err := knob.Apply(ctx, knob.Pods, tg)
			if !c.fits {
				if err == nil || !strings.Contains(err.Error(), "no Linux bridge") {
					t.Errorf("kube-router's rules on %s: %v, want refused (no Linux bridge)", c.datapath, err)
				}
				if a != nil {
					_ = a.Revert()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := a.Revert(); err != nil {
					t.Error(err)
				}
			}()
			out, err := netfilter.Snapshot(ctx, netfilter.OnNode(cl.Server()))
			if err != nil {
				t.Fatal(err)
			}
			save := string(out)
			if !strings.Contains(save, "-i cni0 ") || !strings.Contains(save, "-o cni0 ") || strings.Contains(save, "kube-bridge") {
				t.Errorf("kube-router's FORWARD accepts on the bridge datapath do not name cni0 (and only it):\n%s", save)
			}
		})
	}
}
