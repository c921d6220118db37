package collect

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/procs"
)

// Watching this test process itself: it burns CPU, so the share is > 0,
// and its RSS is non-zero.
func TestDaemonWatchMeasuresItself(t *testing.T) {
	w := &daemonWatch{daemons: []datapath.Daemon{{Name: "self", Node: "host", PID: os.Getpid()}}}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	r, err := w.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metrics
	if m["daemon_self_host_cpu_pct"] <= 0 || m["daemons_rss_bytes"] <= 0 {
		t.Fatalf("metrics %v (spun %d times)", m, x)
	}
	if m["daemons_cpu_pct"] != m["daemon_self_host_cpu_pct"] {
		t.Errorf("sum %v != single %v", m["daemons_cpu_pct"], m["daemon_self_host_cpu_pct"])
	}
}

// daemonKernel is a node's agent that lists its network daemons: two
// calico-node processes and kube-proxy, whose CPU time grows by step.
type daemonKernel struct {
	fakeKernel
	node string
}

func (k *daemonKernel) Daemons(names []string) ([]procs.Proc, error) {
	if len(names) != len(ClusterDaemons) {
		return nil, fmt.Errorf("asked for %v", names)
	}
	return []procs.Proc{
		{Name: "calico-node", PID: 10, Ticks: 100 + k.step, RSSBytes: 50 << 20},
		{Name: "calico-node", PID: 11, Ticks: 200 + k.step, RSSBytes: 30 << 20},
		{Name: "kube-proxy", PID: 12, Ticks: 300, RSSBytes: 20 << 20},
	}, nil
}

// On a cluster each node's network daemons come from its kernel handle:
// processes of one name summed per node, CPU over the window from the
// ticks, memory at its end, and the totals over both nodes.
func TestNodeDaemons(t *testing.T) {
	ks := map[string]*daemonKernel{"srv": {node: "srv"}, "cli": {node: "cli"}}
	tr := Trial{Cluster: namedCluster{}, Kernel: func(n engine.Node) engine.Kernel { return ks[n.Name()] }}
	c, err := daemonsEntry.New(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	ks["srv"].step = 5 // 10 ticks more over both calico-node processes: 0.1 s of CPU
	r, err := c.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metrics
	if m["daemon_calico-node_srv_rss_bytes"] != 80<<20 || m["daemon_kube-proxy_cli_rss_bytes"] != 20<<20 {
		t.Errorf("memory %v", m)
	}
	if cpu := m["daemon_calico-node_srv_cpu_pct"]; cpu <= 0 || cpu > 100 {
		t.Errorf("calico-node on srv used %v%% of a CPU, want (0, 100]", cpu)
	}
	if m["daemon_calico-node_cli_cpu_pct"] != 0 || m["daemons_rss_bytes"] != 2*100<<20 {
		t.Errorf("client node or totals: %v", m)
	}
}

type namedCluster struct{ fakeCluster }

func (namedCluster) Server() engine.Node { return namedNode{name: "srv"} }
func (namedCluster) Client() engine.Node { return namedNode{name: "cli"} }

type namedNode struct {
	fakeNode
	name string
}

func (n namedNode) Name() string { return n.name }
