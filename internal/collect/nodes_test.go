package collect

import (
	"github.com/cnibench/cnibench/internal/study"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
)

// A pinned node counts its own CPUs; an unpinned one every CPU.
func TestNodeBusy(t *testing.T) {
	w := metrics.Window{Cores: []results.CoreStat{
		{CPU: 0, CPUPercent: results.CPUPercent{Idle: 90, IOWait: 0}},
		{CPU: 1, CPUPercent: results.CPUPercent{Idle: 50, IOWait: 10}},
		{CPU: 2, CPUPercent: results.CPUPercent{Idle: 100}},
	}}
	for _, c := range []struct {
		cpus cpuset.Set
		want float64
	}{
		{nil, (10 + 40 + 0) / 3.0},
		{cpuset.Set{1}, 40},
		{cpuset.Set{0, 2}, 5},
	} {
		got, ok := nodeBusy(w, c.cpus)
		if !ok || got != c.want {
			t.Errorf("cpus %v: %v %v, want %v", c.cpus, got, ok, c.want)
		}
	}
	if _, ok := nodeBusy(w, cpuset.Set{7}); ok {
		t.Error("a node without sampled CPUs got a CPU %")
	}
	// A CPU offline at the window's end has zero percentages: it is not
	// 100% busy, it is not counted.
	off := metrics.Window{Cores: []results.CoreStat{
		{CPU: 0, CPUPercent: results.CPUPercent{User: 10, Idle: 90}}, {CPU: 1}}, Offline: []int{1}}
	if got, ok := nodeBusy(off, nil); !ok || got != 10 {
		t.Errorf("cpu1 offline: %v %v, want 10", got, ok)
	}
	if _, ok := nodeBusy(off, cpuset.Set{1}); ok {
		t.Error("a node whose only CPU is offline got a CPU %")
	}
}

// The qdisc metrics are the counters' growth over the window, summed
// over the impaired devices.
func TestQdiscDelta(t *testing.T) {
	start := []impair.Stats{{Packets: 10, Bytes: 1000, Drops: 1}, {Packets: 5}}
	end := []impair.Stats{{Packets: 110, Bytes: 9000, Drops: 6, Requeues: 2, Overlimits: 3}, {Packets: 25, Drops: 4}}
	m := qdiscDelta(start, end)
	want := map[string]float64{MetricQdiscPackets: 120, MetricQdiscBytes: 8000, MetricQdiscDrops: 9,
		MetricQdiscRequeues: 2, MetricQdiscOverlimits: 3}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

// The packet count comes from netlink's 32-bit gnet_stats_basic.packets
// (bytes are 64-bit there): a wrap inside the window is a small growth,
// not 1.8e19. Drops, requeues and overlimits are 32-bit and wrap alike.
func TestQdiscDeltaWraps(t *testing.T) {
	start := []impair.Stats{{Packets: 1<<32 - 10, Bytes: 1<<32 - 100, Drops: 1<<32 - 1}}
	end := []impair.Stats{{Packets: 5, Bytes: 1<<32 + 900, Drops: 2}}
	m := qdiscDelta(start, end)
	for k, want := range map[string]float64{MetricQdiscPackets: 15, MetricQdiscBytes: 1000, MetricQdiscDrops: 3} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
}

// Nodes on one kernel (emulated nodes, a kind-style cluster's) read one
// machine: what both would report alike is recorded once, under the
// client's names, with a note; a cluster's own machines (or local nodes
// pinned apart) keep a row each.
func TestNodesSharedMachine(t *testing.T) {
	for _, c := range []struct {
		name           string
		oneKernel      bool
		client, server cpuset.Set
		want           map[string]float64
		note           string
	}{
		{"cluster", false, nil, nil, map[string]float64{
			MetricNodeCPUClient: 30, MetricNodeCPUServer: 30, MetricNodeMemoryClient: 10, MetricNodeMemoryServer: 20}, ""},
		{"kind-style cluster, one boot ID", true, nil, nil, map[string]float64{
			MetricNodeCPUClient: 30, MetricNodeMemoryClient: 10}, "share its CPUs and memory"},
		{"local, unpinned", true, nil, nil, map[string]float64{
			MetricNodeCPUClient: 30, MetricNodeMemoryClient: 10}, "share its CPUs and memory"},
		{"local, pinned alike", true, cpuset.Set{0, 1}, cpuset.Set{0, 1}, map[string]float64{
			MetricNodeCPUClient: 30, MetricNodeMemoryClient: 10}, "share its CPUs and memory"},
		{"local, pinned apart", true, cpuset.Set{0}, cpuset.Set{1}, map[string]float64{
			MetricNodeCPUClient: 20, MetricNodeCPUServer: 40, MetricNodeMemoryClient: 10}, "share its memory"},
	} {
		client, server := pinnedNode{cpus: c.client, mem: 10}, pinnedNode{cpus: c.server, mem: 20}
		tr := Trial{Cluster: twoNodes{client: client, server: server}, SharedKernel: c.oneKernel,
			Kernel: func(n engine.Node) engine.Kernel { return coresKernel{mem: n.(pinnedNode).mem} }}
		r, err := window(t, nodesEntry, tr)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(r.Metrics, c.want) {
			t.Errorf("%s: %v, want %v", c.name, r.Metrics, c.want)
		}
		note := strings.Join(r.Notes, "; ")
		if (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("%s: note %q, want one saying %q", c.name, note, c.note)
		}
	}
}

type pinnedNode struct {
	fakeNode
	cpus cpuset.Set
	mem  float64
}

func (n pinnedNode) CPUs() cpuset.Set { return n.cpus }

type twoNodes struct {
	fakeCluster
	client, server engine.Node
}

func (c twoNodes) Client() engine.Node { return c.client }
func (c twoNodes) Server() engine.Node { return c.server }

// coresKernel's CPUs are 80% and 60% idle; its memory is the node's.
type coresKernel struct {
	*fakeKernel
	mem float64
}

func (coresKernel) CPU() engine.Sampler               { return coresSampler{} }
func (k coresKernel) MemoryPercent() (float64, error) { return k.mem, nil }

type coresSampler struct{}

func (coresSampler) Start() error { return nil }
func (coresSampler) Stop() (metrics.Window, error) {
	return metrics.Window{Cores: []results.CoreStat{
		{CPU: 0, CPUPercent: results.CPUPercent{Idle: 80}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 60}}}}, nil
}

// A background sweep records the nodes' CPU without counters: seed 004
// explains its measured flow's drop past 400 connections by it (Fig.
// 13c), which the report draws against the connections.
func TestNodesOnForBackground(t *testing.T) {
	if nodesEntry.Enabled(study.Workload{Tool: "iperf3"}) {
		t.Error("nodes on for a plain workload")
	}
	if !nodesEntry.Enabled(study.Workload{Tool: "iperf3", Background: &study.Background{}}) {
		t.Error("nodes off for a background sweep")
	}
}

// An unpinned node of the local engine runs on the CPUs cnibench may use
// (Trial.Machine, its cpuset), not on every CPU of /proc/stat: limited
// to CPUs 0-1 of 8, both busy, it read 25%. A pinned node keeps its own
// CPUs, and a cluster's node (no Machine) every CPU of its kernel.
func TestNodesUnpinnedCountTheMachine(t *testing.T) {
	for _, c := range []struct {
		name    string
		pinned  cpuset.Set
		machine cpuset.Set
		want    float64
	}{
		{"local, unpinned", nil, cpuset.Set{0, 1}, 100},
		{"local, pinned", cpuset.Set{1, 2}, cpuset.Set{0, 1, 2}, 50},
		{"cluster", nil, nil, 25},
	} {
		node := pinnedNode{cpus: c.pinned}
		tr := Trial{Cluster: twoNodes{client: node, server: node}, SharedKernel: true, Machine: c.machine,
			Kernel: func(engine.Node) engine.Kernel { return eightKernel{} }}
		r, err := window(t, nodesEntry, tr)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Metrics[MetricNodeCPUClient]; got != c.want {
			t.Errorf("%s: node CPU %v%%, want %v%%", c.name, got, c.want)
		}
	}
	if got := countedCPUs(nil, cpuset.Set{0, 1}); !slices.Equal(got, cpuset.Set{0, 1}) {
		t.Errorf("unpinned: %v, want the machine's 0-1", got)
	}
}

// eightKernel's CPUs 0 and 1 are busy, 2-7 idle.
type eightKernel struct{ coresKernel }

func (eightKernel) CPU() engine.Sampler { return eightSampler{} }

type eightSampler struct{}

func (eightSampler) Start() error { return nil }
func (eightSampler) Stop() (metrics.Window, error) {
	var w metrics.Window
	for c := range 8 {
		idle := 100.0
		if c < 2 {
			idle = 0
		}
		w.Cores = append(w.Cores, results.CoreStat{CPU: c, CPUPercent: results.CPUPercent{Idle: idle}})
	}
	return w, nil
}
