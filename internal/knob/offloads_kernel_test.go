package knob_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelOffloadDevices: on a calico-vxlan cluster, offloads narrowed
// to the tunnel device turn GRO off on vxlan.calico alone and leave the
// underlay's on, narrowed to the underlay the other way round, and left
// wide (offloads as before offloadDevices) both; reverting the knob turns
// every device's back on.
func TestKernelOffloadDevices(t *testing.T) {
	kerneltest.RequireKernel(t, probe.ToolEthtool)
	cl, _ := workloadtest.Cluster(t, "calico-vxlan", 1)
	ctx := context.Background()
	const gro = "generic-receive-offload"
	type dev struct {
		node engine.Node
		name string
	}
	var devs []dev
	for _, n := range []engine.Node{cl.Server(), cl.Client()} {
		tu, ok := n.Tunnel()
		if !ok {
			t.Fatalf("%s: calico-vxlan node without a tunnel device", n.Name())
		}
		devs = append(devs, dev{n, n.Underlay().Name}, dev{n, tu.Name})
	}
	isTunnel := func(d dev) bool { tu, _ := d.node.Tunnel(); return d.name == tu.Name }
	state := func() map[dev]bool {
		t.Helper()
		out := map[dev]bool{}
		for _, d := range devs {
			on, ok := offload.Features(d.node, d.name)[gro]
			if !ok {
				t.Fatalf("%s/%s: ethtool -k shows no %s", d.node.Name(), d.name, gro)
			}
			out[d] = on
		}
		return out
	}
	// Every device starts with GRO on (a veth's is off by default, a
	// VXLAN device's on): a device the knob wrongly turns off shows.
	for _, d := range devs {
		if err := offload.Set(ctx, d.node, d.name, "gro", true); err != nil {
			t.Fatal(err)
		}
	}
	found := state()
	for _, where := range []string{study.OffloadsTunnel, study.OffloadsUnderlay, ""} {
		dp := study.Datapath{Name: "gro-off", Type: "calico-vxlan", Offloads: map[string]string{"gro": "off"}, OffloadDevices: where}
		env := &results.DatapathEnv{}
		a, err := knob.Apply(ctx, knob.Datapath, &knob.Target{Cluster: cl, Datapath: dp, Env: env})
		if err != nil {
			t.Fatalf("offloadDevices %q: %v", where, err)
		}
		got := state()
		for _, d := range devs {
			touched := where == "" || (where == study.OffloadsTunnel) == isTunnel(d)
			if got[d] != !touched {
				t.Errorf("offloadDevices %q: %s/%s gro %v, want %v", where, d.node.Name(), d.name, got[d], !touched)
			}
			if named := strings.Contains(strings.Join(env.Offloads, "; "), d.node.Name()+"/"+d.name); named != touched {
				t.Errorf("offloadDevices %q: env.json names %s/%s %v, want %v: %q", where, d.node.Name(), d.name, named, touched, env.Offloads)
			}
		}
		if err := a.Revert(); err != nil {
			t.Fatalf("offloadDevices %q: revert: %v", where, err)
		}
		for d, on := range state() {
			if on != found[d] {
				t.Errorf("offloadDevices %q: after revert %s/%s gro %v, found %v", where, d.node.Name(), d.name, on, found[d])
			}
		}
	}
}
