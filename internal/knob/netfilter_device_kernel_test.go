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
	deviceRules(t, "kube-router", "bridge", "no Linux bridge", func(save string) bool {
		return strings.Contains(save, "-i cni0 ") && strings.Contains(save, "-o cni0 ") && !strings.Contains(save, "kube-bridge")
	})
}

// TestKernelNetfilterKnobTunnelDevice: Calico's IP-in-IP rules
// masquerade host-sourced packets leaving by the datapath's tunnel, tunl0
// on calico-ipip; on calico-routed, which has no tunnel, the knob refuses
// them (study validation refuses the pair first; this is the knob's own
// check) instead of installing a rule for a device no packet leaves by.
func TestKernelNetfilterKnobTunnelDevice(t *testing.T) {
	deviceRules(t, "calico-np-ipip", "calico-ipip", "no tunnel device", func(save string) bool {
		return strings.Contains(save, "-A cali-POSTROUTING -o tunl0 ")
	})
}

// TestKernelNetfilterKnobCiliumDevices: Cilium's rules name Cilium's own
// devices (cilium_host, cilium_net, lxc+). On the cilium datapath they
// go in as they are; on calico-routed, which has none of them, the knob
// refuses them (study validation refuses the pair first; this is the
// knob's own check) instead of installing accepts that never match.
func TestKernelNetfilterKnobCiliumDevices(t *testing.T) {
	deviceRules(t, "cilium", "cilium", "has no cilium_host", func(save string) bool {
		return strings.Contains(save, "-A CILIUM_FORWARD -o cilium_host ") && strings.Contains(save, "-A CILIUM_FORWARD -i lxc+ ")
	})
}

// deviceRules applies cni's rules with the netfilter knob on fits, a
// datapath with the device they match, where named(iptables-save) must
// hold, and on calico-routed, which has neither a bridge nor a tunnel
// nor Cilium's devices, where the knob must refuse them saying refusal.
func deviceRules(t *testing.T, cni, fits, refusal string, named func(save string) bool) {
	if err := netfilter.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	ctx := context.Background()
	for _, datapath := range []string{fits, "calico-routed"} {
		t.Run(datapath, func(t *testing.T) {
			cl, pairs := workloadtest.Cluster(t, datapath, 1)
			dp := study.Datapath{Name: datapath + "-nf", Type: datapath, Netfilter: &study.Netfilter{CNI: cni, KubeProxy: study.KubeProxyNone}}
			tg := &knob.Target{Cluster: cl, Datapath: dp, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true,
				Journal: kerneltest.Journal(t, kerneltest.RunID()),
				Servers: []engine.Pod{pairs[0].Server}, Clients: []engine.Pod{pairs[0].Client}}
			a, err := knob.Apply(ctx, knob.Pods, tg)
			if datapath != fits {
				if err == nil || !strings.Contains(err.Error(), refusal) {
					t.Errorf("%s's rules on %s: %v, want refused (%s)", cni, datapath, err, refusal)
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
			if !named(string(out)) {
				t.Errorf("%s's rules on %s do not name the datapath's device:\n%s", cni, datapath, out)
			}
		})
	}
}
