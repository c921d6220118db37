package workload

import (
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
)

// twoNodes: CPUs 0-1 on NUMA node 0, 2-3 on node 1, one thread per core.
var twoNodes = topology.Topology{CPUs: []topology.CPU{{ID: 0, Node: 0, Core: 0}, {ID: 1, Node: 0, Core: 1}, {ID: 2, Node: 1, Core: 2}, {ID: 3, Node: 1, Core: 3}}}

// oneNode: this kind of machine (2 CPUs, one NUMA node, no SMT).
var oneNode = topology.Topology{CPUs: []topology.CPU{{ID: 0, Core: 0}, {ID: 1, Core: 1}}}

func pinned(name string, pin study.Pin) study.Workload {
	return study.Workload{Name: name, Tool: "iperf3", Protocol: "tcp", Placement: study.PlacementInterNode, Pin: &pin}
}

func TestPreparePins(t *testing.T) {
	for _, tc := range []struct {
		topo           topology.Topology
		clientNode     cpuset.Set
		pin            study.Pin
		server, client string
		marked         bool
		note           string
	}{
		{twoNodes, nil, study.Pin{Server: "other-numa"}, "2-3", "0", false, "pin.server other-numa resolved to CPUs 2-3, placed against CPU 0, the lowest of this machine; the client is pinned to 0"},
		{twoNodes, cpuset.Set{2, 3}, study.Pin{Server: "same-numa"}, "3", "2", false, "placed against CPU 2, the first of the client node's"},
		{twoNodes, nil, study.Pin{Server: "same-numa", Client: "1"}, "0", "1", false, "placed against the client's CPUs 1"},
		{twoNodes, nil, study.Pin{Server: "other-core", Client: "none"}, "1", "", false, "CPUs 1"},
		{twoNodes, nil, study.Pin{Server: "3", Client: "other-numa"}, "3", "0-1", false, "pin.client other-numa resolved to CPUs 0-1, placed against the server's CPUs 3"},
		{twoNodes, nil, study.Pin{Server: "none"}, "", "0", false, "(none: not pinned)"},
		{oneNode, nil, study.Pin{Server: "other-numa", Fallback: study.PinMark}, "1", "0", true, "NOT COMPARABLE: placement not possible: this machine has one NUMA node, so same-numa and other-numa cannot be told apart there; ran other-core instead: CPUs 1"},
		{oneNode, nil, study.Pin{Server: "same-core", Fallback: study.PinMark}, "1", "0", true, "no SMT sibling"},
	} {
		w := pinned("w", tc.pin)
		p, err := Prepare([]study.Workload{w}, Machine{Topology: tc.topo, ClientCPUs: tc.clientNode}, nil)
		if err != nil {
			t.Errorf("%+v: %v", tc.pin, err)
			continue
		}
		got := p.Apply(w)
		if got.Pin.Server != tc.server || got.Pin.Client != tc.client {
			t.Errorf("%+v: ran server %q client %q, want %q %q", tc.pin, got.Pin.Server, got.Pin.Client, tc.server, tc.client)
		}
		if w.Pin.Server != tc.pin.Server {
			t.Errorf("Apply changed the study's workload")
		}
		m := map[string]float64{}
		p.Mark(w, m)
		if (m[MetricPinNotComparable] == 1) != tc.marked {
			t.Errorf("%+v: marked %v, want %v", tc.pin, m, tc.marked)
		}
		if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], tc.note) {
			t.Errorf("%+v: notes %q, want one with %q", tc.pin, p.Notes, tc.note)
		}
	}
	// Names resolve among the allowed CPUs: without CPU 1, other-numa
	// of CPU 2 is CPU 0 and other-core of CPU 0 has nothing left.
	allowed := Machine{Topology: twoNodes, Allowed: cpuset.Set{0, 2, 3}}
	if p, err := Prepare([]study.Workload{pinned("w", study.Pin{Server: "other-numa", Client: "2"})}, allowed, nil); err != nil || p.Apply(pinned("w", study.Pin{})).Pin.Server != "0" {
		t.Errorf("other-numa of CPU 2 within 0,2-3: %v", err)
	}
	if _, err := Prepare([]study.Workload{pinned("w", study.Pin{Server: "other-core", Client: "0"})}, allowed, nil); !errors.Is(err, topology.ErrNotPossible) {
		t.Errorf("other-core of CPU 0 within 0,2-3: %v, want not possible", err)
	}
	// A CPU-list pin is not touched.
	w := pinned("lists", study.Pin{Server: "0", Client: "1"})
	p, err := Prepare([]study.Workload{w}, Machine{Topology: oneNode}, nil)
	if err != nil || p.Apply(w).Pin != w.Pin || len(p.Notes) != 0 {
		t.Errorf("CPU lists: %v %+v %q", err, p.Apply(w).Pin, p.Notes)
	}
}

func intraNode(w study.Workload) study.Workload {
	w.Placement = study.PlacementIntraNode
	return w
}

// On a cluster, names resolve the server node's topology (the engine
// read it through the node's agent) when both ends run on that node, and
// notes and refusals name the node.
func TestPreparePinsOnClusterNode(t *testing.T) {
	for _, tc := range []struct {
		topo           topology.Topology
		pin            study.Pin
		server, client string
		note           string
	}{
		{twoNodes, study.Pin{Server: "other-numa"}, "2-3", "0", "pin.server other-numa resolved to CPUs 2-3, placed against CPU 0, the lowest of node w1; the client is pinned to 0"},
		{oneNode, study.Pin{Server: "same-numa", Fallback: study.PinMark}, "1", "0", "NOT COMPARABLE: placement not possible: node w1 has one NUMA node"},
	} {
		w := intraNode(pinned("w", tc.pin))
		p, err := Prepare([]study.Workload{w}, Machine{Topology: tc.topo, Where: "node w1", Remote: true}, nil)
		if err != nil {
			t.Errorf("%+v: %v", tc.pin, err)
			continue
		}
		if got := p.Apply(w); got.Pin.Server != tc.server || got.Pin.Client != tc.client {
			t.Errorf("%+v: ran server %q client %q, want %q %q", tc.pin, got.Pin.Server, got.Pin.Client, tc.server, tc.client)
		}
		if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], tc.note) {
			t.Errorf("%+v: notes %q, want one with %q", tc.pin, p.Notes, tc.note)
		}
	}
}

// Refusals are preflight errors naming the workload, the field and why.
func TestPrepareRefuses(t *testing.T) {
	noPktgen := errors.New("this kernel has no pktgen: /proc/net/pktgen does not exist")
	udpCeiling := func(name, placement string) study.Workload {
		return study.Workload{Name: name, Tool: "iperf3", Protocol: "udp", Placement: placement, LossCeiling: "3%",
			CeilingSearch: &study.CeilingSearch{Sender: study.SenderPktgen}}
	}
	udpRate := func(name string) study.Workload {
		return study.Workload{Name: name, Tool: "iperf3", Protocol: "udp", Length: "1400", Rates: []string{"500M", "1500M"}, Sender: study.SenderPktgen}
	}
	for _, tc := range []struct {
		w    study.Workload
		m    Machine
		dps  []Datapath
		want string
		is   error
	}{
		{pinned("n", study.Pin{Server: "other-numa"}), Machine{Topology: oneNode}, nil,
			"workload n: pin.server other-numa: placement not possible: this machine has one NUMA node, so same-numa and other-numa cannot be told apart there (pin.fallback: mark runs", topology.ErrNotPossible},
		{pinned("s", study.Pin{Server: "same-numa"}), Machine{Topology: oneNode}, nil, "this machine has one NUMA node", topology.ErrNotPossible},
		{pinned("c", study.Pin{Server: "same-core"}), Machine{Topology: twoNodes}, nil, "no SMT sibling", topology.ErrNotPossible},
		{pinned("k", study.Pin{Server: "same-numa"}), Machine{Topology: twoNodes, Where: "node w1", Remote: true}, nil,
			"pin.server same-numa: on a cluster a placement name resolves the server node's CPU topology, and across nodes the other end's CPUs are another machine's", nil},
		{intraNode(pinned("k2", study.Pin{Client: "other-core"})), Machine{Where: "node w1", Remote: true}, nil, "pin.client other-core: the CPU topology of node w1 is unknown", nil},
		{study.Workload{Name: "m", Tool: "iperf3", Protocol: "tcp", MSS: 1440}, Machine{}, []Datapath{{Name: "bridge", PodMTU: 1500}, {Name: "vxlan", PodMTU: 1450}},
			"workload m: mss 1440: datapath vxlan has pod MTU 1450, so a TCP segment carries at most 1410 bytes", nil},
		{study.Workload{Name: "m2", Tool: "iperf3", Protocol: "tcp", MSS: 1440}, Machine{},
			[]Datapath{{Name: "vxlan", PodMTU: 1450}, {Name: "ipip", PodMTU: 1480}, {Name: "gre", PodMTU: 1476}, {Name: "wg", PodMTU: 1420}},
			"workload m2: mss 1440: datapath wg has pod MTU 1420, so a TCP segment carries at most 1380 bytes (MTU - 40) (vxlan, gre too); lower mss", nil},
		{udpCeiling("p", study.PlacementInterNode), Machine{Pktgen: func() error { return noPktgen }}, nil, "workload p: ceilingSearch.sender pktgen: this kernel has no pktgen", noPktgen},
		{udpCeiling("mv", study.PlacementIntraNode), Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "macvlan", Type: "macvlan", PodMTU: 1500}},
			"pktgen cannot feed a MACVLAN-to-MACVLAN path on one host", nil},
		// Both pods in the host's namespace: pktgen's route to the server
		// is the loopback, and every trial failed after 3 s with "no
		// neighbour entry"; across nodes it sends on eth1.
		{udpCeiling("hn", study.PlacementIntraNode), Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "host", Type: "host", PodMTU: 1500, HostNetwork: true}},
			"workload hn: ceilingSearch.sender pktgen cannot send to a server in its own namespace (datapath host", nil},
		{udpCeiling("kp", study.PlacementInterNode), Machine{Pktgen: func() error { return nil }, Remote: true}, nil, "the local engine only", nil},
		{func() study.Workload {
			w := udpCeiling("sock", study.PlacementInterNode)
			w.Target = study.TargetService
			return w
		}(), Machine{Pktgen: func() error { return nil }},
			[]Datapath{{Name: "cilium-kpr", Type: "cilium", PodMTU: 1500, SocketServices: true}},
			"workload sock: ceilingSearch.sender pktgen cannot reach a Service on datapath cilium-kpr", nil},
		{udpCeiling("big", study.PlacementInterNode), Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "vxlan", PodMTU: 1450}},
			"pktgen sends 1472-byte datagrams whole (it does not fragment), more than datapath vxlan's pod MTU 1450 carries (1422 bytes of payload)", nil},
		// The workload's own sender, at a set rate, is checked the same
		// way and named as the study gave it.
		{udpRate("r"), Machine{Pktgen: func() error { return noPktgen }}, nil, "workload r: sender pktgen: this kernel has no pktgen", noPktgen},
		{udpRate("kr"), Machine{Pktgen: func() error { return nil }, Remote: true}, nil, "workload kr: sender pktgen drives the kernel in the pods' namespaces on this machine: the local engine only", nil},
		// A swept length decides whether a datagram fits: that point is named.
		{func() study.Workload {
			w := udpRate("len")
			w.Rates, w.Rate, w.Length, w.Lengths = nil, "500M", "", []string{"1000", "1472"}
			return w
		}(), Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "vxlan", PodMTU: 1450}},
			"workload len@1472: sender pktgen sends 1472-byte datagrams whole", nil},
		// A size as study files write it (iperf3 -l reads "2K" so too)
		// is that many bytes, not the default payload.
		{func() study.Workload {
			w := udpRate("2k")
			w.Length = "2K"
			return w
		}(), Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "bridge", PodMTU: 1500}},
			"workload 2k: sender pktgen sends 2048-byte datagrams whole (it does not fragment), more than datapath bridge's pod MTU 1500 carries", nil},
		// A CPU list its end may not run on: the server's always, the
		// client's on the same machine; none of the allowed CPUs online.
		{pinned("a", study.Pin{Server: "7", Client: "0"}), Machine{Topology: oneNode, Allowed: cpuset.Set{0, 1}, AllowedWhy: "the affinity of cnibench"}, nil,
			"workload a: pin.server 7: this machine lets workloads run on CPUs 0-1 only (the affinity of cnibench), not on 7", nil},
		{pinned("a2", study.Pin{Server: "0", Client: "1-3"}), Machine{Allowed: cpuset.Set{0, 1}, AllowedWhy: "the affinity of cnibench"}, nil,
			"workload a2: pin.client 1-3: this machine lets workloads run on CPUs 0-1 only (the affinity of cnibench), not on 2-3", nil},
		{intraNode(pinned("b", study.Pin{Client: "5"})), Machine{Where: "node w1", Remote: true, Allowed: cpuset.Set{0, 1, 2, 3}, AllowedWhy: "its pods' cpuset"}, nil,
			"workload b: pin.client 5: node w1 lets workloads run on CPUs 0-3 only (its pods' cpuset), not on 5", nil},
		{pinned("c", study.Pin{Server: "other-core"}), Machine{Topology: twoNodes, Allowed: cpuset.Set{8, 9}, AllowedWhy: "the affinity of cnibench"}, nil,
			"workload c: pin.server other-core: none of the online CPUs of this machine is among those workloads may run on (the affinity of cnibench: 8-9)", nil},
	} {
		_, err := Prepare([]study.Workload{tc.w}, tc.m, tc.dps)
		var at *study.FieldProblem
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) ||
			!errors.As(err, &at) || at.Field != "spec.workloads[0]" || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s:\n got %v\nwant %s, one line, of spec.workloads[0]", tc.w.Name, err, tc.want)
		}
	}
	// With pktgen, across nodes of the local engine: accepted.
	if _, err := Prepare([]study.Workload{udpCeiling("pk", study.PlacementInterNode)}, Machine{Pktgen: func() error { return nil }}, nil); err != nil {
		t.Errorf("pktgen across nodes: %v", err)
	}
	if _, err := Prepare([]study.Workload{udpRate("pr")}, Machine{Pktgen: func() error { return nil }}, []Datapath{{Name: "vxlan", PodMTU: 1450}}); err != nil {
		t.Errorf("pktgen at set rates across nodes: %v", err)
	}
	// An iperf3 sender is not probed for pktgen.
	if _, err := Prepare([]study.Workload{{Name: "i", Tool: "iperf3", Protocol: "udp", Rate: "1G"}}, Machine{Pktgen: func() error { return noPktgen }, Remote: true}, nil); err != nil {
		t.Errorf("iperf3 sender: %v", err)
	}
	// Across nodes of a cluster the client's CPUs are another machine's,
	// whose cpuset was not read: not checked.
	if _, err := Prepare([]study.Workload{pinned("x", study.Pin{Server: "1", Client: "5"})}, Machine{Remote: true, Where: "node w1", Allowed: cpuset.Set{0, 1}}, nil); err != nil {
		t.Errorf("client CPUs on another node: %v", err)
	}
	ok := study.Workload{Name: "ok", Tool: "iperf3", Protocol: "tcp", MSS: 1410}
	if _, err := Prepare([]study.Workload{ok}, Machine{}, []Datapath{{Name: "vxlan", PodMTU: 1450}}); err != nil {
		t.Errorf("mss 1410 on MTU 1450: %v", err)
	}
}

// The pktgen sender's payload is the length as study files write it,
// the default without one, and refused outside what pktgen sends.
func TestPktgenPayload(t *testing.T) {
	for length, want := range map[string]int{"": DefaultPktgenPayload, "1400": 1400, "2K": 2048, "18": 18} {
		if got, err := PktgenPayload(length); err != nil || got != want {
			t.Errorf("PktgenPayload(%q) = %d, %v; want %d", length, got, err, want)
		}
	}
	for _, length := range []string{"17", "8", "64K", "1M", "2k", "x"} {
		if got, err := PktgenPayload(length); err == nil || !strings.Contains(err.Error(), "18 to 65493 bytes") {
			t.Errorf("PktgenPayload(%q) = %d, %v; want refused", length, got, err)
		}
	}
}

// CPU cost per packet of a one-node workload on a host-network datapath
// counts the node's underlay while the traffic goes over the loopback:
// every trial failed with no packets counted, or ARP made each cost
// enormous. Refused at preflight at the workload's cpp; across nodes it
// runs.
func TestCPPRefusedOverLoopback(t *testing.T) {
	host := []Datapath{{Name: "host", Type: "host", PodMTU: 1500, HostNetwork: true}}
	intra := study.Workload{Name: "cpp-intra", Tool: "iperf3", CPP: true, Placement: study.PlacementIntraNode}
	_, err := Prepare([]study.Workload{intra}, Machine{}, host)
	if err == nil || !strings.Contains(err.Error(), "spec.workloads[0].cpp") || !strings.Contains(err.Error(), "talking over the loopback") {
		t.Errorf("intra-node cpp on host: %v", err)
	}
	inter := intra
	inter.Name, inter.Placement = "cpp-inter", study.PlacementInterNode
	if _, err := Prepare([]study.Workload{inter}, Machine{}, host); err != nil {
		t.Errorf("inter-node cpp on host: %v", err)
	}
	if _, err := Prepare([]study.Workload{intra}, Machine{}, []Datapath{{Name: "bridge", PodMTU: 1500}}); err != nil {
		t.Errorf("intra-node cpp on bridge: %v", err)
	}
	// target hairpin runs the client in the server pod, the node's
	// namespace on a host-network datapath: the loopback again.
	hairpin := inter
	hairpin.Name, hairpin.Target = "cpp-hairpin", study.TargetHairpin
	_, err = Prepare([]study.Workload{hairpin}, Machine{}, host)
	if err == nil || !strings.Contains(err.Error(), "spec.workloads[0].cpp") || !strings.Contains(err.Error(), "target hairpin's client runs in the server pod") {
		t.Errorf("hairpin cpp on host: %v", err)
	}
	if _, err := Prepare([]study.Workload{hairpin}, Machine{}, []Datapath{{Name: "bridge", PodMTU: 1500}}); err != nil {
		t.Errorf("hairpin cpp on bridge: %v", err)
	}
}

// A task tool (podstartup) on a host-network datapath has no pod network
// to start: every trial failed in the engine once the cluster was built,
// and was retried until given up. Refused at preflight at the workload's
// line; on a datapath with pod networks, and for a tool that is no task,
// accepted.
func TestTaskRefusedOnHostNetwork(t *testing.T) {
	m := Machine{Task: func(tool string) bool { return tool == "podstartup" }}
	host := []Datapath{{Name: "bridge", PodMTU: 1500}, {Name: "hostnet", Type: "host", PodMTU: 1500, HostNetwork: true}}
	burst := study.Workload{Name: "startup", Tool: "podstartup", Protocol: "tcp"}
	_, err := Prepare([]study.Workload{burst}, m, host)
	var at *study.FieldProblem
	if err == nil || !errors.As(err, &at) || at.Field != "spec.workloads[0]" ||
		!strings.Contains(err.Error(), "workload startup: podstartup starts pods and times their network's set-up, and datapath hostnet runs pods in the node's network") {
		t.Errorf("podstartup on a host-network datapath: %v", err)
	}
	if _, err := Prepare([]study.Workload{burst}, m, host[:1]); err != nil {
		t.Errorf("podstartup on bridge: %v", err)
	}
	if _, err := Prepare([]study.Workload{{Name: "tcp", Tool: "iperf3", Protocol: "tcp"}}, m, host); err != nil {
		t.Errorf("iperf3 on a host-network datapath: %v", err)
	}
}
