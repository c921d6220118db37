package netfilter_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestKernelDatapathNodeIsNodeOf: what each datapath says of its nodes
// (netfilter.DatapathNode: its PodBridge, Tunnel and Devices), by which
// study validation refuses a CNI's rules before anything is built, is
// what NodeOf reads from a built node, by which the knob refuses them:
// the same bridge (read from the kernel: the master of a pod's host
// veth, when a Linux bridge) and tunnel, every device it lists there,
// and for every CNI the same verdict of Fits. A datapath whose pods have
// no host-side device is refused by both. Every datapath of the catalog
// and every variant another implementation builds (those whose kernel
// features or programs are missing skip).
func TestKernelDatapathNodeIsNodeOf(t *testing.T) {
	kerneltest.RequireRoot(t)
	type entry struct {
		name string
		d    datapath.Datapath
	}
	var all []entry
	for _, d := range catalog.All() {
		all = append(all, entry{d.Name(), d})
	}
	for _, o := range catalog.Variants() {
		d, err := catalog.Build(o)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, entry{o.Type + "-" + o.Implementation, d})
	}
	for _, e := range all {
		t.Run(e.name, func(t *testing.T) {
			said, serr := netfilter.DatapathNode(e.d)
			cl, pairs := workloadtest.ClusterOf(t, e.d, 1)
			built, berr := netfilter.NodeOf(cl.Server(), []engine.Pod{pairs[0].Server})
			if (serr == nil) != (berr == nil) {
				t.Fatalf("the datapath says %v, the built node %v: want both refused or neither", serr, berr)
			}
			if serr != nil {
				return
			}
			// The tunnel's name may be settled only when the datapath is
			// built (weave's mode: vxlan_sys_6784 with Open vSwitch), so
			// before that the datapath says whether it has one, and after
			// it names the one built.
			if built.Bridge != said.Bridge || (built.Tunnel == "") != (said.Tunnel == "") || built.Tunnel != e.d.Tunnel() {
				t.Errorf("built node: bridge %q tunnel %q; the datapath says %q and %q before it is built, tunnel %q after",
					built.Bridge, built.Tunnel, said.Bridge, said.Tunnel, e.d.Tunnel())
			}
			for _, dev := range said.Devices {
				probe := netfilter.Generator{Name: "probe", Devices: []string{dev}, Home: e.name}
				if err := probe.FitsDevices(built.Devices); err != nil {
					t.Errorf("the datapath lists %s, and the built node has no such device (%v)", dev, built.Devices)
				}
			}
			for _, cni := range netfilter.Names() {
				g, err := netfilter.Lookup(cni)
				if err != nil {
					t.Fatal(err)
				}
				if s, b := g.Fits(said), g.Fits(built); (s == nil) != (b == nil) {
					t.Errorf("%s's rules: on what the datapath says, %v; on the built node, %v", cni, s, b)
				}
			}
		})
	}
}
