package knob

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// fakeNode is a remote node: its devices live in its own (host) netns.
type fakeNode struct {
	name  string
	veths []netns.Iface
	ns    string // an emulated node's namespace; "" for a remote node
}

func (n *fakeNode) Name() string                { return n.name }
func (n *fakeNode) Netns() string               { return n.ns }
func (n *fakeNode) CPUs() cpuset.Set            { return nil }
func (n *fakeNode) Underlay() netns.Iface       { return netns.Iface{Name: "eth0"} }
func (n *fakeNode) Tunnel() (netns.Iface, bool) { return netns.Iface{Name: "flannel.1"}, true }
func (n *fakeNode) HostVeths(pods []engine.Pod) ([]netns.Iface, error) {
	return n.veths, nil
}
func (n *fakeNode) PodIface(engine.Pod) netns.Iface { return netns.Iface{} }
func (n *fakeNode) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("not here")
}

type fakeCluster struct{ srv, cli *fakeNode }

func (c fakeCluster) Server() engine.Node { return c.srv }
func (c fakeCluster) Client() engine.Node { return c.cli }
func (c fakeCluster) Scale(context.Context, int) ([]engine.Pod, []engine.Pod, error) {
	return nil, nil, nil
}
func (c fakeCluster) Close() error { return nil }

// agentKernel stands for the kube engine's agent: it impairs devices of
// its node and logs what it did.
type agentKernel struct {
	engine.Kernel
	node   string
	log    *[]string
	failOn string
	// failUndo is a device whose undo fails.
	failUndo string
}

func (k agentKernel) Impair(dev netns.Iface, s impair.Spec, ingress bool) (netns.Iface, impair.Spec, func() error, error) {
	if dev.Name == k.failOn {
		return netns.Iface{}, impair.Spec{}, nil, errors.New("no netem here")
	}
	*k.log = append(*k.log, fmt.Sprintf("impair %s/%s loss=%g ingress=%v", k.node, dev.Name, s.Loss, ingress))
	on := dev
	if ingress {
		on.Name = "ifb-" + dev.Name
	}
	// As an agent under a shaper would: the queue it set.
	s.Limit = 2891
	return on, s, func() error {
		*k.log = append(*k.log, "revert "+k.node+"/"+dev.Name)
		if dev.Name == k.failUndo {
			return errors.New("qdisc busy")
		}
		return nil
	}, nil
}

// Where the node's kernel is an engine.Impairer (kube's agent), the
// impairment goes on through it on the node spec.impairAt names, not on
// this machine; its devices are what the qdisc collector reads, and the
// undo reverts them newest first. A device that fails reverts the ones
// already impaired.
func TestImpairmentThroughNodeKernel(t *testing.T) {
	cli := &fakeNode{name: "w2", veths: []netns.Iface{{Name: "veth1"}, {Name: "veth2"}}}
	srv := &fakeNode{name: "w1"}
	var log []string
	kernels := map[engine.Node]*agentKernel{cli: {node: "w2", log: &log}, srv: {node: "w1", log: &log}}
	tgt := func(where, dir string) *Target {
		s := &study.Study{}
		s.Spec.ImpairAt = study.ImpairAt{Where: where, Direction: dir}
		return &Target{Study: s, Cluster: fakeCluster{srv, cli}, Impairment: study.Impairment{Name: "loss-low"},
			Kernel: func(n engine.Node) engine.Kernel { return kernels[n] }, MeasuredClients: make([]engine.Pod, 2)}
	}

	tg := tgt(study.WhereServerTunnel, study.DirIngress)
	undo, err := applyImpairment(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Impaired.Node != srv || len(tg.Impaired.Devs) != 1 || tg.Impaired.Devs[0].Name != "ifb-flannel.1" {
		t.Errorf("impaired %+v, want the server's ifb", tg.Impaired)
	}
	// What the agent installed, its queue limit too, for env.json.
	if len(tg.Impaired.Netem) != 1 || tg.Impaired.Netem[0].String() != "loss 5% limit 2891" {
		t.Errorf("installed %v, want the agent's netem", tg.Impaired.Netem)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	want := "impair w1/flannel.1 loss=5 ingress=true|revert w1/flannel.1"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("agent calls %s, want %s", got, want)
	}

	log = nil
	tg = tgt(study.WhereClientPods, study.DirEgress)
	if undo, err = applyImpairment(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	undo()
	want = "impair w2/veth1 loss=5 ingress=false|impair w2/veth2 loss=5 ingress=false|revert w2/veth2|revert w2/veth1"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("agent calls %s, want %s", got, want)
	}

	log = nil
	kernels[cli].failOn = "veth2"
	if _, err := applyImpairment(context.Background(), tgt(study.WhereClientPods, study.DirEgress)); err == nil ||
		!strings.Contains(err.Error(), "veth2 of node w2") {
		t.Errorf("failing device: %v", err)
	}
	want = "impair w2/veth1 loss=5 ingress=false|revert w2/veth1"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("after a failure: %s, want %s", got, want)
	}
}

// TestImpairClientPodsNeedsEachPodsDevice: impairAt client-pods where a
// measured client pod has no host-side device (a macvlan child, an SR-IOV
// VF: HostVeths leaves it out) is refused, impairing nothing; it impaired
// the others' devices only (or none) and measured the run as impaired.
func TestImpairClientPodsNeedsEachPodsDevice(t *testing.T) {
	cli := &fakeNode{name: "w2", veths: []netns.Iface{{Name: "veth1"}}}
	var log []string
	s := &study.Study{}
	s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientPods, Direction: study.DirEgress}
	tg := &Target{Study: s, Cluster: fakeCluster{&fakeNode{name: "w1"}, cli}, Impairment: study.Impairment{Name: "loss-low"},
		Kernel: func(engine.Node) engine.Kernel { return agentKernel{node: "w2", log: &log} }, MeasuredClients: make([]engine.Pod, 2)}
	_, err := applyImpairment(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "1 of the 2 pods on node w2 have none") {
		t.Errorf("client-pods with a pod lacking its device = %v; want refused naming the count", err)
	}
	if len(log) != 0 {
		t.Errorf("impaired %v before refusing", log)
	}
}

// An impairment that fails on one device undoes the devices before it;
// when that undo fails too, a netem qdisc stays where the next trial
// assumes none, and the error holds a *RevertError (knob.Apply's
// contract), on which the runner stops the run instead of measuring on.
// Both the agent's path and the local one; a clean undo is no
// RevertError.
func TestImpairmentFailedUndoIsRevertError(t *testing.T) {
	cli := &fakeNode{name: "w2", veths: []netns.Iface{{Name: "veth1"}, {Name: "veth2"}}}
	srv := &fakeNode{name: "w1"}
	tgt := func(k func(engine.Node) engine.Kernel) *Target {
		s := &study.Study{}
		s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientPods, Direction: study.DirEgress}
		return &Target{Study: s, Cluster: fakeCluster{srv, cli}, Impairment: study.Impairment{Name: "loss-low"}, Kernel: k,
			MeasuredClients: make([]engine.Pod, len(cli.veths))}
	}
	check := func(what string, err error, revertErr bool) {
		t.Helper()
		var rerr *RevertError
		switch {
		case err == nil || !strings.Contains(err.Error(), "veth2"):
			t.Errorf("%s: %v, want veth2's failure", what, err)
		case errors.As(err, &rerr) != revertErr:
			t.Errorf("%s: %v is a *RevertError: %v, want %v", what, err, !revertErr, revertErr)
		case revertErr && !strings.Contains(rerr.Error(), "veth1"):
			t.Errorf("%s: %v does not name veth1's failed undo", what, rerr)
		}
	}

	// Through the node's agent.
	var log []string
	k := &agentKernel{node: "w2", log: &log, failOn: "veth2", failUndo: "veth1"}
	_, err := applyImpairment(context.Background(), tgt(func(engine.Node) engine.Kernel { return k }))
	check("agent, undo fails", err, true)
	k.failUndo = ""
	_, err = applyImpairment(context.Background(), tgt(func(engine.Node) engine.Kernel { return k }))
	check("agent, undo clean", err, false)

	// Locally: the qdisc operations stood in for.
	apply, applyIngress, revert := netemApply, netemApplyIngress, netemRevert
	defer func() { netemApply, netemApplyIngress, netemRevert = apply, applyIngress, revert }()
	netemApply = func(ns, dev string, _ impair.Spec, _ func(impair.Prev) error) (impair.Prev, error) {
		if dev == "veth2" {
			return impair.Prev{}, errors.New("no netem here")
		}
		return impair.Prev{Netns: ns, Dev: dev}, nil
	}
	netemApplyIngress = nil
	failUndo := "veth1"
	netemRevert = func(p impair.Prev) error {
		if p.Dev == failUndo {
			return errors.New("qdisc busy")
		}
		return nil
	}
	_, err = applyImpairment(context.Background(), tgt(nil))
	check("local, undo fails", err, true)
	failUndo = ""
	_, err = applyImpairment(context.Background(), tgt(nil))
	check("local, undo clean", err, false)
}

// A study's impairment whose values are all zero (the 0% step of a loss
// sweep) impairs nothing, as the preset none: no qdisc, no netem needed,
// and no impaired device, which the qdisc collector read and found
// without netem, failing every trial of the cell.
func TestZeroImpairmentIsNone(t *testing.T) {
	cli, srv := &fakeNode{name: "w2"}, &fakeNode{name: "w1"}
	var log []string
	s := &study.Study{}
	for _, fields := range []map[string]string{{"loss": "0%"}, {"delay": "0ms", "corrupt": "0%"}} {
		tg := &Target{Study: s, Cluster: fakeCluster{srv, cli}, Impairment: study.Impairment{Name: "loss-0", Fields: fields},
			Kernel: func(n engine.Node) engine.Kernel { return agentKernel{node: n.Name(), log: &log} }}
		if impairEntry.Wanted(tg) {
			t.Errorf("%v: impairment knob wanted", fields)
		}
		a, err := Apply(context.Background(), Trial, tg)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) > 0 || len(tg.Impaired.Devs) > 0 {
			t.Errorf("%v: agent calls %q, impaired %+v; want none", fields, log, tg.Impaired)
		}
		if err := a.Revert(); err != nil {
			t.Error(err)
		}
	}
	// A definition that does not resolve is wanted: Apply says why.
	bad := &Target{Study: s, Cluster: fakeCluster{srv, cli}, Impairment: study.Impairment{Name: "x", Fields: map[string]string{"loss": "200%"}}}
	if !impairEntry.Wanted(bad) {
		t.Error("an impairment that does not resolve is not wanted: its error would be lost")
	}
}
