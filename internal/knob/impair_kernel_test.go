package knob

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// tunnelNode is a node whose tunnel device is a dummy in a test namespace.
type tunnelNode struct{ ns string }

func (n tunnelNode) Name() string          { return "client" }
func (n tunnelNode) Netns() string         { return n.ns }
func (n tunnelNode) CPUs() cpuset.Set      { return nil }
func (n tunnelNode) Underlay() netns.Iface { return netns.Iface{Netns: n.ns, Name: "eth1"} }
func (n tunnelNode) Tunnel() (netns.Iface, bool) {
	return netns.Iface{Netns: n.ns, Name: "flannel.1"}, true
}
func (n tunnelNode) HostVeths([]engine.Pod) ([]netns.Iface, error) { return nil, nil }
func (n tunnelNode) PodIface(engine.Pod) netns.Iface               { return netns.Iface{} }
func (n tunnelNode) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("no")
}

type tunnelCluster struct{ n tunnelNode }

func (c tunnelCluster) Server() engine.Node { return c.n }
func (c tunnelCluster) Client() engine.Node { return c.n }
func (c tunnelCluster) Scale(context.Context, int) ([]engine.Pod, []engine.Pod, error) {
	return nil, nil, nil
}
func (c tunnelCluster) Close() error { return nil }

// The impairment knob installs every Table II preset on the client's
// tunnel device exactly (read back with netlink), journals the device's
// qdisc first, and its undo restores the kernel's default root and marks
// the record done.
func TestKernelImpairmentKnob(t *testing.T) {
	kerneltest.RequireRoot(t)
	if err := probe.Require(probe.Netem); err != nil {
		var ue *probe.UnsupportedError
		if os.Getenv("CNIBENCH_IN_VM") != "" && errors.As(err, &ue) {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	ns := kerneltest.Netns(t, j, id, "c")
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "flannel.1"
	if err := h.LinkAdd(&netlink.Dummy{LinkAttrs: attrs}); err != nil {
		t.Fatal(err)
	}
	s := &study.Study{}
	s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}
	for _, p := range impair.Presets() {
		if p.Name == "none" {
			continue
		}
		tgt := &Target{Study: s, Cluster: tunnelCluster{tunnelNode{ns}}, Journal: j, Impairment: study.Impairment{Name: p.Name}}
		if !impairEntry.Wanted(tgt) {
			t.Fatalf("%s: not wanted", p.Name)
		}
		undo, err := impairEntry.Apply(context.Background(), tgt)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		got, err := impair.ReadBack(ns, "flannel.1")
		if err != nil || !p.Spec.Matches(got) {
			t.Errorf("%s: read back %+v (%v), want %+v", p.Name, got, err, p.Spec)
		}
		if len(tgt.Impaired.Devs) != 1 || tgt.Impaired.Devs[0].Name != "flannel.1" {
			t.Errorf("%s: impaired devices %v", p.Name, tgt.Impaired)
		}
		if _, err := impair.QdiscStats(ns, "flannel.1"); err != nil {
			t.Errorf("%s: qdisc stats: %v", p.Name, err)
		}
		r, err := journal.ReadReplay(j.Path())
		if err != nil {
			t.Fatal(err)
		}
		q := 0
		for _, e := range r.Pending() {
			if e.Qdisc != nil {
				q++
			}
		}
		if q != 1 {
			t.Errorf("%s: %d pending qdisc records while applied, want 1", p.Name, q)
		}
		if err := undo(); err != nil {
			t.Fatalf("%s: undo: %v", p.Name, err)
		}
		if prev, err := impair.Inspect(ns, "flannel.1"); err != nil || !prev.Default {
			t.Errorf("%s: after undo the root qdisc is %+v (%v), want the kernel's default", p.Name, prev, err)
		}
		if r, err = journal.ReadReplay(j.Path()); err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Pending() {
			if e.Qdisc != nil {
				t.Errorf("%s: qdisc record still pending after undo", p.Name)
			}
		}
	}
}
