package workload

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
)

// smtTwoNodes: NUMA node 0 holds CPUs 0-3, node 1 CPUs 4-7; each core
// has two threads, numbered n and n+2 (cores {0,2}, {1,3}, {4,6}, {5,7}).
var smtTwoNodes = topology.Topology{CPUs: []topology.CPU{
	{ID: 0, Node: 0, Core: 0}, {ID: 1, Node: 0, Core: 1}, {ID: 2, Node: 0, Core: 0}, {ID: 3, Node: 0, Core: 1},
	{ID: 4, Node: 1, Core: 4}, {ID: 5, Node: 1, Core: 5}, {ID: 6, Node: 1, Core: 4}, {ID: 7, Node: 1, Core: 5},
}}

// The reviewer's case: the server node on CPUs 0-1 (NUMA node 0), the
// client node on 2-3 (node 1). Placement names used to resolve over the
// whole machine, so same-numa and other-core of the client's CPU 2 put
// the server on CPU 3, the client node's. A name resolves among its
// end's node's CPUs now; one that cannot hold there is refused, or with
// fallback mark runs the nearest placement among them, marked.
func TestPinNamesStayOnTheirNode(t *testing.T) {
	split := Machine{Topology: twoNodes, ServerCPUs: cpuset.Set{0, 1}, ClientCPUs: cpuset.Set{2, 3}}
	for _, tc := range []struct {
		w              study.Workload
		server, client string
		note           string // "" with a refusal: want is the error
		want           string
	}{
		{w: pinned("sn", study.Pin{Server: "same-numa"}),
			want: "workload sn: pin.server same-numa: placement not possible: same-numa of CPU 2: none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is on CPU 2's NUMA node (pin.fallback: mark runs"},
		{w: pinned("oc", study.Pin{Server: "other-core"}),
			want: "pin.server other-core: placement not possible: other-core of CPU 2: none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is on another core of CPU 2's NUMA node"},
		{w: pinned("cn", study.Pin{Server: "0", Client: "same-numa"}),
			want: "pin.client same-numa: placement not possible: same-numa of CPU 0: none of the client node's CPUs 2-3 (spec.nodes.client.cpus) is on CPU 0's NUMA node"},
		{w: pinned("on", study.Pin{Server: "other-numa"}), server: "0-1", client: "2",
			note: "pin.server other-numa resolved to CPUs 0-1 among the server node's CPUs 0-1 (spec.nodes.server.cpus), placed against CPU 2, the first of the client node's; the client is pinned to 2"},
		{w: pinned("co", study.Pin{Server: "1", Client: "other-numa"}), server: "1", client: "2-3", note: "resolved to CPUs 2-3 among the client node's CPUs 2-3"},
		// With mark, the nearest placement among the node's CPUs:
		// nothing of CPU 2's NUMA node is there, so the scheduler's choice.
		{w: pinned("snm", study.Pin{Server: "same-numa", Fallback: study.PinMark}), server: "", client: "2",
			note: "NOT COMPARABLE: placement not possible: same-numa of CPU 2: none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is on CPU 2's NUMA node; ran unpinned instead, on the server node's CPUs 0-1 (spec.nodes.server.cpus) (none of them is on another core of CPU 2's NUMA node)"},
		// Intra-node, both ends on the server node's one NUMA node:
		// other-numa cannot hold there.
		{w: intraNode(pinned("in", study.Pin{Server: "other-numa"})),
			want: "pin.server other-numa: placement not possible: other-numa of CPU 0: none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is on another NUMA node than CPU 0's"},
		{w: intraNode(pinned("inm", study.Pin{Server: "other-numa", Fallback: study.PinMark})), server: "1", client: "0",
			note: "placed against CPU 0, the first of the server node's; the client is pinned to 0; NOT COMPARABLE: placement not possible: other-numa of CPU 0: none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is on another NUMA node than CPU 0's; ran other-core instead: CPUs 1"},
		{w: intraNode(pinned("ic", study.Pin{Server: "0", Client: "other-core"})), server: "0", client: "1", note: "resolved to CPUs 1 among the server node's CPUs 0-1"},
		// A hairpin's client runs in the server pod: placed against the
		// server node's first CPU, not the client node's.
		{w: func() study.Workload {
			w := pinned("hp", study.Pin{Server: "same-numa"})
			w.Target = study.TargetHairpin
			return w
		}(), server: "1", client: "0", note: "placed against CPU 0, the first of the server node's"},
	} {
		p, err := Prepare([]study.Workload{tc.w}, split, nil)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s:\n got %v\nwant %s", tc.w.Name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.w.Name, err)
			continue
		}
		if got := p.Apply(tc.w); got.Pin.Server != tc.server || got.Pin.Client != tc.client {
			t.Errorf("%s: ran server %q client %q, want %q %q", tc.w.Name, got.Pin.Server, got.Pin.Client, tc.server, tc.client)
		}
		m := map[string]float64{}
		p.Mark(tc.w, m)
		if marked := tc.w.Pin.Fallback == study.PinMark; (m[MetricPinNotComparable] == 1) != marked {
			t.Errorf("%s: marked %v, want %v", tc.w.Name, m, marked)
		}
		if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], tc.note) {
			t.Errorf("%s: notes %q, want one with %q", tc.w.Name, p.Notes, tc.note)
		}
	}
}

// same-core where the node's CPUs hold no SMT pair: the machine has
// siblings (CPU 0's is 2), the server node's CPUs 0-1 do not.
func TestPinSameCoreWithinNode(t *testing.T) {
	w := intraNode(pinned("sc", study.Pin{Server: "same-core"}))
	if p, err := Prepare([]study.Workload{w}, Machine{Topology: smtTwoNodes}, nil); err != nil || p.Apply(w).Pin.Server != "2" {
		t.Fatalf("same-core of CPU 0 on the whole machine: %v, want CPU 2", err)
	}
	m := Machine{Topology: smtTwoNodes, ServerCPUs: cpuset.Set{0, 1}}
	_, err := Prepare([]study.Workload{w}, m, nil)
	if want := "none of the server node's CPUs 0-1 (spec.nodes.server.cpus) is an SMT sibling of CPU 0"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, topology.ErrNotPossible) {
		t.Errorf("same-core within 0-1: %v, want %s", err, want)
	}
	w.Pin.Fallback = study.PinMark
	p, err := Prepare([]study.Workload{w}, m, nil)
	if err != nil || p.Apply(w).Pin.Server != "1" || !strings.Contains(p.Notes[0], "ran other-core instead: CPUs 1") {
		t.Errorf("same-core within 0-1, mark: %v %+v", err, p)
	}
}

// Whatever a name resolves to, with or without mark, is among its end's
// node's CPUs, and so is an empty other end pinned to the reference:
// every name, each end named, both placements, on both topologies, with
// the nodes on either NUMA node or across both.
func TestPinNamesNeverLeaveTheNode(t *testing.T) {
	splits := [][2]cpuset.Set{{{0, 1}, {2, 3}}, {{2, 3}, {0, 1}}, {{0, 4}, {1, 5}}, {{0, 2}, {4, 6}}, {{0, 1}, nil}, {nil, {4, 5}}}
	for _, topo := range []topology.Topology{twoNodes, smtTwoNodes} {
		for _, nodes := range splits {
			m := Machine{Topology: topo, ServerCPUs: nodes[0], ClientCPUs: nodes[1]}
			for _, pin := range pinsByName() {
				for _, w := range []study.Workload{pinned("w", pin), intraNode(pinned("w", pin))} {
					p, err := Prepare([]study.Workload{w}, m, nil)
					if err != nil {
						continue
					}
					server, client := pinEnds(w, m)
					got := p.Apply(w)
					for _, end := range []struct {
						e    pinEnd
						cpus string
					}{{server, got.Pin.Server}, {client, got.Pin.Client}} {
						// A CPU list runs as given (study validation keeps
						// it on its node).
						if end.cpus == "" || len(end.e.cpus) == 0 || (end.e.pin != "" && !topology.IsName(end.e.pin)) {
							continue
						}
						if set, _ := cpuset.Parse(end.cpus); len(set.Outside(end.e.cpus)) > 0 {
							t.Errorf("nodes %v, %s %+v: the %s runs on %s, off its node's CPUs %s", nodes, w.Placement, pin, end.e.side, end.cpus, end.e.cpus)
						}
					}
				}
			}
		}
	}
}

// pinsByName are pins with a name on one end, the other end empty,
// none or a CPU, with either fallback.
func pinsByName() []study.Pin {
	var out []study.Pin
	for _, name := range []string{topology.SameNUMA, topology.OtherNUMA, topology.SameCore, topology.OtherCore} {
		for _, other := range []string{"", topology.None, "0", "2", "4", "5"} {
			for _, fb := range []string{"", study.PinMark} {
				out = append(out, study.Pin{Server: name, Client: other, Fallback: fb}, study.Pin{Server: other, Client: name, Fallback: fb})
			}
		}
	}
	return out
}

// A hairpin's client runs inside the server pod, on the server node, as
// pinEnds places it: on a cluster its CPU list is checked against the
// node's pods' cpuset, and a placement name resolves against the node's
// topology. Both used to ask for intra-node: {target: hairpin, pin: {client:
// "7"}} on a node whose pods have CPUs 0-3 passed preflight and failed
// every trial in taskset, and {pin: {server: same-numa}} was refused as
// "across nodes".
func TestPinHairpinClientOnServerNode(t *testing.T) {
	hairpin := func(w study.Workload) study.Workload {
		w.Target = study.TargetHairpin
		return w
	}
	node := Machine{Topology: twoNodes, Where: "node w1", Remote: true, Allowed: cpuset.Set{0, 1, 2, 3}, AllowedWhy: "its pods' cpuset"}
	_, err := Prepare([]study.Workload{hairpin(pinned("h7", study.Pin{Client: "7"}))}, node, nil)
	if err == nil || !strings.Contains(err.Error(), "workload h7: pin.client 7: node w1 lets workloads run on CPUs 0-3 only (its pods' cpuset), not on 7") {
		t.Errorf("hairpin client on CPU 7 of node w1: %v", err)
	}
	w := hairpin(pinned("hn", study.Pin{Server: "same-numa"}))
	p, err := Prepare([]study.Workload{w}, node, nil)
	if err != nil {
		t.Fatalf("hairpin same-numa on node w1: %v", err)
	}
	if got := p.Apply(w); got.Pin.Server != "1" || got.Pin.Client != "0" {
		t.Errorf("hairpin same-numa on node w1 ran server %q client %q, want 1 and 0", got.Pin.Server, got.Pin.Client)
	}
}
