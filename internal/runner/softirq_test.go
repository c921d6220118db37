package runner

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// netRx is a baseline trial's cores with the given NET_RX rates.
func netRx(rates ...float64) []results.CoreStat {
	var out []results.CoreStat
	for cpu, r := range rates {
		out = append(out, results.CoreStat{CPU: cpu, NetRxPerSec: r})
	}
	return out
}

// Each end avoids its own busiest NET_RX core: emulated nodes share the
// machine's cores, so a baseline trial's cores show the client's too; a
// cluster's client node has cores of its own, sampled apart (and when
// they are not, its end keeps -1: the highest CPU). A trial with no
// NET_RX at an end keeps what was learned.
func TestSoftIRQCorePerEnd(t *testing.T) {
	for _, c := range []struct {
		name           string
		p              plan
		clientCores    []results.CoreStat
		server, client int
	}{
		{"pinned nodes", plan{machine: cpuset.Range(4), serverCPUs: cpuset.Set{0, 1}, clientCPUs: cpuset.Set{2, 3}, sharedKernel: true}, nil, 1, 2},
		{"shared CPUs", plan{machine: cpuset.Range(4), sharedKernel: true}, nil, 2, 2},
		{"cluster", plan{machine: cpuset.Range(4), clientMachine: cpuset.Range(2), remote: true}, netRx(5, 7), 2, 1},
		{"cluster, client not sampled", plan{machine: cpuset.Range(4), remote: true}, nil, 2, -1},
	} {
		r := &run{plan: &c.p}
		if got := r.softIRQCore(study.SideServer, 1); got != -1 {
			t.Errorf("%s: server core %d before any baseline, want -1", c.name, got)
		}
		one := results.Cell{Replicas: 1}
		r.noteSoftIRQCore(results.Sample{Cell: one, Cores: netRx(10, 500, 900, 20), ClientCores: c.clientCores})
		r.noteSoftIRQCore(results.Sample{Cell: one, Cores: netRx(0, 0, 0, 0)})
		if s, cl := r.softIRQCore(study.SideServer, 1), r.softIRQCore(study.SideClient, 1); s != c.server || cl != c.client {
			t.Errorf("%s: softirq cores server %d, client %d; want %d, %d", c.name, s, cl, c.server, c.client)
		}
		if got := r.softIRQCore(study.SideServer, 4); got != -1 {
			t.Errorf("%s: core %d at 4 replicas, learned only at 1", c.name, got)
		}
	}
}

// A resumed run learns the cores from the interrupted run's baseline
// trials, the last one counting, and not from a tuning's.
func TestResumeKeepsSoftIRQCore(t *testing.T) {
	s := roundsStudy(t)
	var log bytes.Buffer
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	base := results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: s.Spec.Tunings[0].Name, Workload: s.Variants()[0].Name, Replicas: 1}
	if !s.Spec.Tunings[0].IsBaseline() || s.Spec.Tunings[1].IsBaseline() {
		t.Fatalf("tunings %v: want the baseline first", s.Spec.Tunings)
	}
	tuned := base
	tuned.Tuning = s.Spec.Tunings[1].Name
	for i, smp := range []results.Sample{
		{Cell: base, Trial: 1, Cores: netRx(0, 0, 0, 900)},
		{Cell: base, Trial: 2, Cores: netRx(0, 900, 0, 0)},
		{Cell: tuned, Trial: 2, Cores: netRx(900, 0, 0, 0)},
	} {
		smp.Attempt, smp.Metrics = 1, map[string]float64{"bitrate_gbps": float64(i + 1)}
		if err := cut.out.AppendSample(smp); err != nil {
			t.Fatal(err)
		}
	}
	res := resumeFrom(t, cut, &log, nil)
	if got := res.softIRQCore(study.SideServer, 1); got != 1 {
		t.Errorf("resumed run avoids core %d, want 1 (the last baseline trial's)", got)
	}
}

// steerNode is a client node with a tunnel, in namespace cnb-c.
type steerNode struct{ engine.Node }

func (steerNode) Underlay() netns.Iface { return netns.Iface{Netns: "cnb-c", Name: "eth1"} }
func (steerNode) Tunnel() (netns.Iface, bool) {
	return netns.Iface{Netns: "cnb-c", Name: "vxlan.calico"}, true
}
func (steerNode) Name() string { return "client" }

// queueFS has one receive queue per device and reads "f" everywhere.
type queueFS struct{ tune.FS }

func (queueFS) Read(ns, kind, p string) (string, error) { return "f", nil }
func (queueFS) List(ns, kind, dir string) ([]string, error) {
	return []string{"rx-0", "tx-0"}, nil
}

type queueEngine struct{ stubEngine }

func (queueEngine) FS(engine.Node) tune.FS { return queueFS{} }

// The client node's RPS/RFS as found go on record beside the server's,
// keyed "client: ", with the global flow table only when the client
// node has its own kernel.
func TestClientSteeringRecorded(t *testing.T) {
	for _, shared := range []bool{true, false} {
		r := &run{engine: queueEngine{}, plan: &plan{sharedKernel: shared}}
		got := map[string]string{}
		r.clientSteering(steerNode{}, got)
		want := []string{"client: cnb-c/eth1/rx-0/rps_cpus", "client: cnb-c/eth1/rx-0/rps_flow_cnt",
			"client: cnb-c/vxlan.calico/rx-0/rps_cpus", "client: cnb-c/vxlan.calico/rx-0/rps_flow_cnt"}
		if !shared {
			want = append(want, "client: "+tune.SockFlowEntriesSysctl)
		}
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, want) {
			t.Errorf("shared kernel %v: recorded %v, want %v", shared, keys, want)
		}
	}
}

// sysNode is a node whose namespace is its name.
type sysNode struct {
	engine.Node
	name string
}

func (n sysNode) Name() string  { return n.name }
func (n sysNode) Netns() string { return n.name }

// nodeFS reads the name of the node it belongs to everywhere.
type nodeFS struct {
	tune.FS
	node string
}

func (f nodeFS) Read(ns, kind, p string) (string, error) { return f.node, nil }

type nodeFSEngine struct{ stubEngine }

func (nodeFSEngine) FS(n engine.Node) tune.FS { return nodeFS{node: n.Name()} }

// env.json's sysctls are read where the tunings set them: a client-side
// tuning's on the client node when a workload's client runs there, on
// the server node when one runs beside its server (intra-node).
func TestTuningSysctlsWhereSet(t *testing.T) {
	src := `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings:
    - baseline
    - {name: bbr, side: client, sysctls: {net.ipv4.tcp_congestion_control: bbr}}
    - {name: budget, sysctls: {net.core.netdev_budget: 600}}
  workloads: %s
  replicas: [1]
  trials: 1
  duration: 3s
`
	for _, c := range []struct {
		placements string
		want       map[string]string
	}{
		{"[{name: a, tool: iperf3}]", map[string]string{"net.core.netdev_budget": "server", "client: net.ipv4.tcp_congestion_control": "client"}},
		{"[{name: a, tool: iperf3, placement: intra-node}]", map[string]string{"net.core.netdev_budget": "server", "net.ipv4.tcp_congestion_control": "server"}},
		{"[{name: a, tool: iperf3}, {name: b, tool: iperf3, placement: intra-node}]", map[string]string{"net.core.netdev_budget": "server",
			"net.ipv4.tcp_congestion_control": "server", "client: net.ipv4.tcp_congestion_control": "client"}},
	} {
		s, err := study.Parse("s.yaml", []byte(fmt.Sprintf(src, c.placements)), study.Options{}, study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()})
		if err != nil {
			t.Fatal(err)
		}
		r := &run{engine: nodeFSEngine{}, study: s, plan: &plan{}}
		if got := r.tuningSysctls(sysNode{name: "server"}, sysNode{name: "client"}); !maps.Equal(got, c.want) {
			t.Errorf("%s: recorded %v, want %v", c.placements, got, c.want)
		}
	}
}
