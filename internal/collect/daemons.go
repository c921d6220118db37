package collect

import (
	"context"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/procs"
)

// DaemonLister is implemented by clusters whose datapath runs processes
// on this machine (flanneld, etcd): the paper reports their CPU and
// memory. The local engine's clusters implement it.
type DaemonLister interface{ Daemons() []datapath.Daemon }

// ClusterDaemons are a real cluster's network daemons, by process name
// (comm), that the collector weighs on each node through the node's
// kernel handle (the kube engine's agent): the CNI agents whose memory
// the paper compares (flanneld; calico-node and its BIRD; cilium-agent;
// kube-router; Weave's weaver and weave-npc; Open vSwitch's daemons) and
// kube-proxy, whichever of them run in the node's network namespace.
var ClusterDaemons = []string{"flanneld", "calico-node", "bird", "bird6", "cilium-agent", "kube-router",
	"weaver", "weave-npc", "ovs-vswitchd", "ovsdb-server", "kube-proxy"}

var daemonsEntry = Entry{
	Name: "daemons",
	Description: "CPU (percent of one CPU) over the window and resident memory at its end of the datapath's " +
		"daemons (flanneld, etcd, BIRD...), from /proc/PID of clusters that list them; on a cluster, of the " +
		"network daemons (ClusterDaemons: the CNI's agents, kube-proxy) running in each node's network namespace, read by its agent: " +
		"the processes of a name there at both ends of the window (matched by PID) summed; a daemon with none, and the sums when no daemon was measured, are left out",
	Metrics: []string{"daemon_NAME_NODE_cpu_pct", "daemon_NAME_NODE_rss_bytes", "daemons_cpu_pct", "daemons_rss_bytes"},
	Enabled: always,
	New: func(t Trial) (Collector, error) {
		if dl, ok := t.Cluster.(DaemonLister); ok {
			return &daemonWatch{daemons: dl.Daemons()}, nil
		}
		w := &nodeDaemons{}
		for _, n := range []engine.Node{t.Cluster.Server(), t.Cluster.Client()} {
			if t.Kernel == nil {
				break
			}
			if r, ok := t.Kernel(n).(engine.DaemonReader); ok {
				w.nodes = append(w.nodes, n.Name())
				w.readers = append(w.readers, r)
			}
		}
		return w, nil
	},
}

// daemonUse is one daemon's (or one name's, summed) CPU ticks at both
// ends of the window and resident memory at its end.
type daemonUse struct {
	key        string // "NAME_NODE"
	t0, t1     uint64
	rss        float64
	started    bool
	seenAtStop bool
}

// daemonMetrics returns, per daemon and summed, CPU in percent of one CPU
// over the window and resident memory in bytes. A daemon missing at
// either end (it died, or started during the window) is skipped, and the
// sums are left out when none was measured: absence shows as a missing
// value, not a zero.
func daemonMetrics(uses []*daemonUse, elapsed float64) map[string]float64 {
	m := map[string]float64{}
	if len(uses) == 0 || elapsed <= 0 {
		return m
	}
	var cpu, rss float64
	n := 0
	for _, u := range uses {
		if !u.started || !u.seenAtStop || u.t1 < u.t0 {
			continue
		}
		n++
		pct := float64(u.t1-u.t0) / procs.ClockTicks / elapsed * 100
		m["daemon_"+u.key+"_cpu_pct"] = pct
		m["daemon_"+u.key+"_rss_bytes"] = u.rss
		cpu += pct
		rss += u.rss
	}
	if n > 0 {
		m["daemons_cpu_pct"] = cpu
		m["daemons_rss_bytes"] = rss
	}
	return m
}

// daemonWatch records the CPU time of a datapath's daemons on this
// machine over a trial and their resident memory at its end.
type daemonWatch struct {
	daemons []datapath.Daemon
	uses    []*daemonUse
	start   time.Time
}

func (w *daemonWatch) Start(context.Context) error {
	w.start, w.uses = time.Now(), nil
	for _, d := range w.daemons {
		t, err := procs.Ticks("/proc", d.PID)
		w.uses = append(w.uses, &daemonUse{key: d.Name + "_" + d.Node, t0: t, started: err == nil})
	}
	return nil
}

func (w *daemonWatch) Stop(context.Context) (Result, error) {
	if len(w.daemons) == 0 {
		return Result{}, nil
	}
	for i, d := range w.daemons {
		u := w.uses[i]
		t, err := procs.Ticks("/proc", d.PID)
		var rss float64
		if err == nil {
			rss, err = procs.RSS("/proc", d.PID)
		}
		u.t1, u.rss, u.seenAtStop = t, rss, err == nil
	}
	return Result{Metrics: daemonMetrics(w.uses, time.Since(w.start).Seconds())}, nil
}

// nodeDaemons records ClusterDaemons on each node through its kernel
// handle. Processes are matched by PID across the window and those of one
// name on a node summed (calico-node runs several): a process at one end
// only is not the daemon's, and adding its ticks to one end made the
// growth negative or wrong (calico-node's readiness probe, calico-node
// -felix-live, runs every 10 s; a restarted daemon has a new PID). A
// daemon none of whose processes lived through the window is left out.
type nodeDaemons struct {
	nodes   []string
	readers []engine.DaemonReader
	start   map[procKey]uint64
	began   time.Time
}

// procKey is one process of one node.
type procKey struct {
	node int
	name string
	pid  int
}

// read lists each node's daemons.
func (w *nodeDaemons) read() ([][]procs.Proc, error) {
	out := make([][]procs.Proc, len(w.readers))
	for i, r := range w.readers {
		ps, err := r.Daemons(ClusterDaemons)
		if err != nil {
			return nil, err
		}
		out[i] = ps
	}
	return out, nil
}

func (w *nodeDaemons) Start(context.Context) error {
	w.began, w.start = time.Now(), map[procKey]uint64{}
	ps, err := w.read()
	if err != nil {
		return err
	}
	for i, node := range ps {
		for _, p := range node {
			w.start[procKey{i, p.Name, p.PID}] = p.Ticks
		}
	}
	return nil
}

func (w *nodeDaemons) Stop(context.Context) (Result, error) {
	if len(w.readers) == 0 {
		return Result{}, nil
	}
	ps, err := w.read()
	if err != nil {
		return Result{}, err
	}
	return Result{Metrics: daemonMetrics(w.matched(ps), time.Since(w.began).Seconds())}, nil
}

// matched sums, per name and node, the processes of the end reading ps
// that were there at the start: their ticks at both ends and their
// memory at the end. A PID whose ticks went down is another process that
// took a freed PID.
func (w *nodeDaemons) matched(ps [][]procs.Proc) []*daemonUse {
	uses := map[string]*daemonUse{}
	var order []*daemonUse
	for i, node := range ps {
		for _, p := range node {
			t0, ok := w.start[procKey{i, p.Name, p.PID}]
			if !ok || p.Ticks < t0 {
				continue
			}
			key := p.Name + "_" + w.nodes[i]
			u, ok := uses[key]
			if !ok {
				u = &daemonUse{key: key, started: true, seenAtStop: true}
				uses[key] = u
				order = append(order, u)
			}
			u.t0, u.t1, u.rss = u.t0+t0, u.t1+p.Ticks, u.rss+p.RSSBytes
		}
	}
	return order
}
