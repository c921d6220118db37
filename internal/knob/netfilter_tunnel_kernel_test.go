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

// TestKernelNetfilterKnobTunnelDevice: Calico's IP-in-IP rules
// masquerade host-sourced packets leaving by the datapath's tunnel, tunl0
// on calico-ipip; on calico-routed, which has no tunnel, the knob refuses
// them (study validation refuses the pair first; this is the knob's own
// check) instead of installing a rule for a device no packet leaves by.
func TestKernelNetfilterKnobTunnelDevice(t *testing.T) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		datapath string
		fits     bool
	}{{"calico-ipip", true}, {"calico-routed", false}} {
		t.Run(c.datapath, func(t *testing.T) {
			cl, pairs := workloadtest.Cluster(t, c.datapath, 1)
			dp := study.Datapath{Name: c.datapath + "-ipip", Type: c.datapath, Netfilter: &study.Netfilter{CNI: "calico-np-ipip", KubeProxy: study.KubeProxyNone}}
			tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true,
				Journal: kerneltest.Journal(t, kerneltest.RunID()),
				Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
			a, err := knob.Apply(ctx, knob.Pods, tg)
			if !c.fits {
				if err == nil || !strings.Contains(err.Error(), "no tunnel device") {
					t.Errorf("calico-np-ipip's rules on %s: %v, want refused (no tunnel device)", c.datapath, err)
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
			if !strings.Contains(string(out), "-A cali-POSTROUTING -o tunl0 ") {
				t.Errorf("calico-np-ipip on calico-ipip masquerades nothing leaving by tunl0:\n%s", out)
			}
		})
	}
}
