package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// Placement names are resolved at preflight; a name this machine cannot
// honour is a preflight error (exit 2) unless the study marks instead,
// and what each name resolved to becomes a note for env.json.
func TestPreflightPlacementNames(t *testing.T) {
	topo, err := topology.Read("/sys")
	if err != nil {
		if _, serr := os.Stat("/sys/devices/system/cpu"); serr != nil {
			t.Skipf("skipped: no sysfs CPUs: %v", serr)
		}
		t.Fatal(err)
	}
	if topo.Nodes() == 1 {
		_, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-numa}}]"))
		if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "workload iperf3-tcp: pin.server other-numa: placement not possible: this machine has one NUMA node") {
			t.Errorf("other-numa on one NUMA node: %v", err)
		}
		p, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-numa, fallback: mark}}]"))
		if err != nil {
			t.Fatalf("with fallback mark: %v", err)
		}
		if !strings.Contains(strings.Join(p.notes, "\n"), "NOT COMPARABLE") {
			t.Errorf("notes %q lack the marking", p.notes)
		}
	}
	if len(topo.CPUs) >= 2 {
		p, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-core, client: '0'}}]"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(p.notes, "\n"), "pin.server other-core resolved to CPUs") {
			t.Errorf("notes %q", p.notes)
		}
	}
	// On a cluster, the server node's topology the engine read: names
	// resolve against it when both ends are on that node.
	node := &engine.NodeTopology{Where: "node w1", Topology: topology.Topology{CPUs: []topology.CPU{{ID: 0, Core: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}}}}
	_, err = preflight(context.Background(), stubEngine{remote: true, topo: node}, stubStudy(t, "[{tool: iperf3, pin: {server: same-core}}]"))
	if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "across nodes the other end's CPUs are another machine's") {
		t.Errorf("names across a cluster's nodes: %v", err)
	}
	st := stubStudy(t, "[{tool: iperf3, placement: intra-node, pin: {server: other-core}}]")
	p, err := preflight(context.Background(), stubEngine{remote: true, topo: node}, st)
	if err != nil {
		t.Fatalf("names on one cluster node: %v", err)
	}
	if w := p.workloads.Apply(st.Variants()[0]); w.Pin.Server != "1-2" || w.Pin.Client != "0" {
		t.Errorf("other-core on node w1 ran server %q client %q, want 1-2 and 0", w.Pin.Server, w.Pin.Client)
	}
	if !strings.Contains(strings.Join(p.notes, "\n"), "placed against CPU 0, the lowest of node w1") {
		t.Errorf("notes %q do not name the node", p.notes)
	}
	// On the cluster node, names resolve among the CPUs its pods may use:
	// without CPU 1, other-core of CPU 0 is CPU 2; a CPU list outside
	// them is refused, naming the node.
	node.Allowed, node.AllowedWhy = cpuset.Set{0, 2}, "its pods' cpuset"
	if p, err = preflight(context.Background(), stubEngine{remote: true, topo: node}, st); err != nil || p.workloads.Apply(st.Variants()[0]).Pin.Server != "2" {
		t.Errorf("other-core within node w1's CPUs 0,2: %v", err)
	}
	_, err = preflight(context.Background(), stubEngine{remote: true, topo: node}, stubStudy(t, "[{tool: iperf3, pin: {server: '1'}}]"))
	if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "workload iperf3-tcp: pin.server 1: node w1 lets workloads run on CPUs 0,2 only (its pods' cpuset), not on 1") {
		t.Errorf("CPU 1 on node w1: %v", err)
	}
	// On this machine, a CPU beyond this process's affinity is refused.
	own, err := hostcpus.Affinity()
	if err != nil {
		t.Fatal(err)
	}
	beyond := own[len(own)-1] + 1
	_, err = preflight(context.Background(), stubEngine{}, stubStudy(t, fmt.Sprintf("[{tool: iperf3, pin: {server: '%d'}}]", beyond)))
	if want := fmt.Sprintf("pin.server %d: this machine lets workloads run on CPUs %s only", beyond, own); err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("CPU %d here: %v, want %q", beyond, err, want)
	}
	_, err = preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, mss: 1460}]"))
	if err != nil {
		t.Errorf("mss 1460 on bridge at MTU 1500: %v", err)
	}
}

// The one-NUMA-node note names the server's machine: this one on the
// local engine, the server node on a cluster, counted by the topology
// the engine read where it read one, else by env.json's count (the
// node's, from its agent), and nothing when the count is unknown (0). A
// topology of CPU-list pins, the allowed CPUs alone, counts nothing: a
// two-node server was said to have one.
func TestOneNUMANote(t *testing.T) {
	one := &engine.NodeTopology{Where: "node w1", Topology: topology.Topology{CPUs: []topology.CPU{{ID: 0}, {ID: 1}}}}
	two := &engine.NodeTopology{Where: "node w1", Topology: topology.Topology{CPUs: []topology.CPU{{ID: 0}, {ID: 1, Node: 1}}}}
	allowedOnly := &engine.NodeTopology{Where: "node w1", Allowed: cpuset.Range(4)}
	for _, tc := range []struct {
		pinned, remote bool
		nodes          int
		topo           *engine.NodeTopology
		want           string
	}{
		{true, false, 1, nil, "but this machine has one NUMA node"},
		{true, false, 2, nil, ""},
		{false, false, 1, nil, ""},
		{true, true, 0, nil, ""},
		{true, true, 1, nil, "but the server node has one NUMA node"},
		{true, true, 2, one, "but node w1 has one NUMA node"},
		{true, true, 1, two, ""},
		{true, true, 2, allowedOnly, ""},
		{true, true, 0, allowedOnly, ""},
		{true, true, 1, allowedOnly, "but node w1 has one NUMA node"},
	} {
		got := oneNUMANote(tc.pinned, tc.remote, tc.nodes, tc.topo)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
	}
}

// A pod start-up burst on the host-network datapath is refused at
// preflight, at the workload's line (the runner hands workload.Prepare
// the tools that are tasks); it failed every trial in the engine once
// the cluster was built.
func TestPreflightRefusesTaskOnHostNetwork(t *testing.T) {
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge, host]
  workloads: [{name: burst, tool: podstartup, concurrency: [2]}]
  trials: 1
  duration: 3s
`
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: []string{"bridge", "host"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = preflight(context.Background(), stubEngine{}, s)
	if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "spec.workloads[0]") ||
		!strings.Contains(err.Error(), "workload burst: podstartup starts pods and times their network's set-up, and datapath host runs pods in the node's network") {
		t.Errorf("podstartup on host: %v", err)
	}
}
