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
	// Spin until the process's CPU time has grown a tick, not for a
	// fixed 300 ms: on a loaded machine (steal time) that wall time held
	// less than a tick of CPU, and the share was 0.
	t0, err := procs.Ticks("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for deadline := time.Now().Add(10 * time.Second); ; x++ {
		if x%100000 != 0 {
			continue
		}
		now, err := procs.Ticks("/proc", os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now > t0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("this process's CPU time did not grow in 10 s of spinning (%d times)", x)
		}
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
	srv := &daemonKernel{node: "srv"}
	m := daemonsOver(t, map[string]engine.Kernel{"srv": srv, "cli": &daemonKernel{node: "cli"}}, func() {
		srv.step = 5 // 10 ticks more over both calico-node processes: 0.1 s of CPU
	})
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

// phasedKernel lists one set of daemons at the window's start and
// another at its end.
type phasedKernel struct {
	fakeKernel
	start, end []procs.Proc
	ended      bool
}

func (k *phasedKernel) Daemons([]string) ([]procs.Proc, error) {
	if k.ended {
		return k.end, nil
	}
	return k.start, nil
}

// Processes are matched by PID: calico-node's exec probe (calico-node
// -felix-live, a calico-node process for a moment) at one end of the
// window neither cancels the daemon's growth nor adds its memory; a
// restarted daemon (a new PID) is missing, not 0; with no daemon
// measured the sums are missing too.
func TestNodeDaemonsMatchPIDs(t *testing.T) {
	const mib = 1 << 20
	srv := &phasedKernel{
		start: []procs.Proc{
			{Name: "calico-node", PID: 10, Ticks: 100, RSSBytes: 50 * mib},
			{Name: "calico-node", PID: 98, Ticks: 50, RSSBytes: 40 * mib}, // a probe, gone at the end
			{Name: "kube-proxy", PID: 12, Ticks: 300, RSSBytes: 20 * mib},
		},
		end: []procs.Proc{
			{Name: "calico-node", PID: 10, Ticks: 110, RSSBytes: 50 * mib},
			{Name: "calico-node", PID: 99, Ticks: 1, RSSBytes: 40 * mib}, // a probe, new at the end
			{Name: "kube-proxy", PID: 13, Ticks: 5, RSSBytes: 20 * mib},  // restarted
		},
	}
	ks := map[string]engine.Kernel{"srv": srv, "cli": &phasedKernel{}}
	m := daemonsOver(t, ks, func() { srv.ended = true })
	if cpu := m["daemon_calico-node_srv_cpu_pct"]; cpu <= 0 || cpu > 100 {
		t.Errorf("calico-node on srv used %v%% of a CPU, want (0, 100]: %v", cpu, m)
	}
	if m["daemon_calico-node_srv_rss_bytes"] != 50*mib || m["daemons_rss_bytes"] != 50*mib {
		t.Errorf("memory counts a probe: %v", m)
	}
	for _, k := range []string{"daemon_kube-proxy_srv_cpu_pct", "daemon_kube-proxy_srv_rss_bytes"} {
		if v, ok := m[k]; ok {
			t.Errorf("restarted kube-proxy measured: %s = %v", k, v)
		}
	}

	// Nothing measured: no daemons_* at all.
	srv.start, srv.end, srv.ended = nil, nil, false
	if m := daemonsOver(t, ks, func() {}); len(m) != 0 {
		t.Errorf("no daemons: %v, want no metrics", m)
	}
}

// daemonsOver runs the daemons collector over a window of the nodes'
// kernels (srv, cli) in which between happens, and returns its metrics.
func daemonsOver(t *testing.T, ks map[string]engine.Kernel, between func()) map[string]float64 {
	t.Helper()
	tr := Trial{Cluster: namedCluster{}, Kernel: func(n engine.Node) engine.Kernel { return ks[n.Name()] }}
	c, err := daemonsEntry.New(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	between()
	r, err := c.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Metrics
}

type namedCluster struct{ fakeCluster }

func (namedCluster) Server() engine.Node { return namedNode{name: "srv"} }
func (namedCluster) Client() engine.Node { return namedNode{name: "cli"} }

type namedNode struct {
	fakeNode
	name string
}

func (n namedNode) Name() string { return n.name }
