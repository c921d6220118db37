package knob

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A tuning goes on the server node's underlay, tunnel and the measured
// pods' veths (the paper's host side), or on the underlay alone with
// devices: underlay (what advise's rfs candidate changes, so its A/B
// measures that).
func TestTuningTargetDevices(t *testing.T) {
	srv := &fakeNode{name: "w1", veths: []netns.Iface{{Name: "cali1"}, {Name: "cali2"}}}
	for _, c := range []struct {
		devices string
		want    []string
	}{
		{"", []string{"eth0", "flannel.1", "cali1", "cali2"}},
		{study.DevicesNode, []string{"eth0", "flannel.1", "cali1", "cali2"}},
		{study.DevicesUnderlay, []string{"eth0"}},
	} {
		tu := study.Tuning{Name: "rfs", RPS: &study.RPS{CPUs: study.CPUsAll}, Devices: c.devices}
		_, tgt, err := tuningTarget(&Target{Cluster: fakeCluster{srv: srv, cli: &fakeNode{name: "w2"}}, Tuning: tu}, study.SideServer)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range tgt.NodeIfaces {
			got = append(got, i.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("devices %q: tuned %v, want %v", c.devices, got, c.want)
		}
	}
}

// bondedNode is a cluster node whose address is on a bond.
type bondedNode struct{ *fakeNode }

func (bondedNode) ReceiveDevices() []netns.Iface {
	return []netns.Iface{{Name: "ens1"}, {Name: "ens2"}}
}

// bondedCluster's server is a bondedNode.
type bondedCluster struct {
	fakeCluster
	srv bondedNode
}

func (c bondedCluster) Server() engine.Node { return c.srv }

// On a node whose address is on a bond (or a VLAN, or OpenShift's br-ex)
// the masks go on the devices under it, where RPS is decided as their
// drivers hand packets up: on the bond's own queues they steered nothing.
func TestTuningTargetStackedUnderlay(t *testing.T) {
	srv := bondedNode{&fakeNode{name: "w1"}}
	tu := study.Tuning{Name: "rps", RPS: &study.RPS{CPUs: study.CPUsAll}, Devices: study.DevicesUnderlay}
	cl := bondedCluster{fakeCluster{srv: srv.fakeNode, cli: &fakeNode{name: "w2"}}, srv}
	_, tgt, err := tuningTarget(&Target{Cluster: cl, Tuning: tu}, study.SideServer)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range tgt.NodeIfaces {
		got = append(got, i.Name)
	}
	if !slices.Equal(got, []string{"ens1", "ens2"}) {
		t.Errorf("tuned %v, want the bond's ports", got)
	}
}

// The client end is the client node's devices and the measured clients,
// with the client's CPUs and softirq core; intra-node clients' end is the
// server node, its CPUs and its softirq core.
func TestTuningTargetClientSide(t *testing.T) {
	srv := &fakeNode{name: "w1", veths: []netns.Iface{{Name: "cali1"}}}
	cli := &fakeNode{name: "w2", veths: []netns.Iface{{Name: "cali9"}}}
	tu := study.Tuning{Name: "rps", RPS: &study.RPS{CPUs: study.CPUsAllButSoftIRQ}, Side: study.SideBoth}
	for _, c := range []struct {
		side, clientsOn, node, veth string
		cpus                        cpuset.Set
		softirq                     int
	}{
		{study.SideServer, "w2", "w1", "cali1", cpuset.Range(4), 0},
		{study.SideClient, "w2", "w2", "cali9", cpuset.Set{2, 3}, 3},
		{study.SideClient, "w1", "w1", "cali1", cpuset.Range(4), 0},
	} {
		kt := &Target{Cluster: fakeCluster{srv: srv, cli: cli}, Tuning: tu, MeasuredClients: []engine.Pod{podOn{c.clientsOn}},
			SteerCPUs: cpuset.Range(4), SoftIRQCore: 0, ClientSteerCPUs: cpuset.Set{2, 3}, ClientSoftIRQCore: 3}
		node, tgt, err := tuningTarget(kt, c.side)
		if err != nil {
			t.Fatal(err)
		}
		if node.Name() != c.node || tgt.NodeIfaces[2].Name != c.veth || !slices.Equal(tgt.CPUs, c.cpus) || tgt.SoftIRQCore != c.softirq {
			t.Errorf("%s side, clients on %s: node %s, devices %v, CPUs %v, softirq core %d", c.side, c.clientsOn, node.Name(), tgt.NodeIfaces, tgt.CPUs, tgt.SoftIRQCore)
		}
	}
}

// The client end's writes are the client node's and pods'; intra-node
// clients' node writes are the server node's (their pods stay clients').
func TestSideOf(t *testing.T) {
	srv, cli := &fakeNode{name: "w1"}, &fakeNode{name: "w2"}
	tu := study.Tuning{Name: "rps", RPS: &study.RPS{CPUs: study.CPUsAll}, Side: study.SideBoth}
	for _, c := range []struct {
		side, clientsOn string
		want            []string
	}{
		{study.SideServer, "w2", []string{results.WhereNode, results.WherePods}},
		{study.SideClient, "w2", []string{results.WhereClientNode, results.WhereClientPods}},
		{study.SideClient, "w1", []string{results.WhereNode, results.WhereClientPods}},
	} {
		kt := &Target{Cluster: fakeCluster{srv: srv, cli: cli}, Tuning: tu, MeasuredClients: []engine.Pod{podOn{c.clientsOn}}}
		_, tgt, err := tuningTarget(kt, c.side)
		if err != nil {
			t.Fatal(err)
		}
		if got := []string{tgt.NodeWhere, tgt.PodsWhere}; !slices.Equal(got, c.want) {
			t.Errorf("side %s, clients on %s: recorded at %v, want %v", c.side, c.clientsOn, got, c.want)
		}
	}
}

// podOn is a pod on the named node.
type podOn struct{ node string }

func (p podOn) Name() string { return "p" }
func (p podOn) Node() string { return p.node }
func (p podOn) IP() net.IP   { return nil }
func (p podOn) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("not here")
}
