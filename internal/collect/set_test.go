package collect

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// fake is a collector that logs its calls.
type fake struct {
	name             string
	log              *[]string
	startErr, endErr error
	delay            time.Duration // how long Start takes
}

func (f *fake) Start(context.Context) error {
	*f.log = append(*f.log, "+"+f.name)
	time.Sleep(f.delay)
	return f.startErr
}

func (f *fake) Stop(context.Context) (Result, error) {
	*f.log = append(*f.log, "-"+f.name)
	return Result{Metrics: map[string]float64{f.name: 1}}, f.endErr
}

// fakeWS is a whole-trial fake that also hears the window's start.
type fakeWS struct{ fake }

func (f *fakeWS) WindowStart(context.Context) error {
	*f.log = append(*f.log, "^"+f.name)
	return nil
}

// The window opens once every collector has started, and only then are
// the whole-trial ones told (ending a trace can take seconds): the hook
// runs after the later collectors' first readings, before their ends.
func TestSetWindowStartLast(t *testing.T) {
	var log []string
	ws := &fakeWS{fake{name: "wt", log: &log}}
	s := &Set{names: []string{"cpu", "wt", "q"}, cs: []Collector{&fake{name: "cpu", log: &log}, ws, &fake{name: "q", log: &log}},
		early: []bool{false, true, false}, started: make([]bool, 3), took: make([]time.Duration, 3)}
	if err := s.StartEarly(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "+wt +cpu +q ^wt -q -wt -cpu" {
		t.Errorf("log %q, want the hook after every start", got)
	}
	if s.Opened().Before(before) {
		t.Errorf("opened %v, before Start was called (%v)", s.Opened(), before)
	}
}

// A set starts in list order and stops in reverse, so the first
// collector's window brackets the others'; a failed start stops those
// already started; the first collector's error wins.
func TestSetOrder(t *testing.T) {
	var log []string
	mk := func(names ...string) (*Set, []*fake) {
		s := &Set{}
		var fs []*fake
		for _, n := range names {
			f := &fake{name: n, log: &log}
			s.names, s.cs, fs = append(s.names, n), append(s.cs, f), append(fs, f)
			s.early, s.started = append(s.early, strings.HasPrefix(n, "w")), append(s.started, false)
			s.took = append(s.took, 0)
		}
		return s, fs
	}
	s, fs := mk("a", "b", "c")
	fs[0].endErr, fs[2].endErr = errors.New("a failed"), errors.New("c failed")
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := s.Stop(context.Background())
	if got := strings.Join(log, " "); got != "+a +b +c -c -b -a" || err == nil || err.Error() != "a failed" || len(r.Metrics) != 3 {
		t.Errorf("log %q, err %v, metrics %v", got, err, r.Metrics)
	}
	log = nil
	s, fs = mk("a", "b", "c")
	fs[1].startErr = errors.New("b failed")
	if err := s.Start(context.Background()); err == nil || strings.Join(log, " ") != "+a +b -a" {
		t.Errorf("failed start: log %q, err %v", log, err)
	}
	// Whole-trial collectors (named w* here) start early, the others at
	// the window; Stop ends every started one, in reverse list order.
	log = nil
	s, _ = mk("a", "wb", "c")
	if err := s.StartEarly(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stop(context.Background()); err != nil || strings.Join(log, " ") != "+wb +a +c -c -wb -a" {
		t.Errorf("early and late: log %q, err %v", log, err)
	}
	// A window that never opened: Stop ends the early one alone.
	log = nil
	s, _ = mk("a", "wb")
	_ = s.StartEarly(context.Background())
	_, _ = s.Stop(context.Background())
	if got := strings.Join(log, " "); got != "+wb -wb" {
		t.Errorf("window never opened: log %q", got)
	}
	// Slowest names the collector that held the window's start up; a
	// whole-trial one started early does not count at the window. c
	// takes 200 ms, not 20: a loaded machine's a, which takes none, took
	// that long. wb takes longer still, or counting it would go unseen.
	s, fs = mk("a", "wb", "c")
	fs[1].delay, fs[2].delay = 400*time.Millisecond, 200*time.Millisecond
	_ = s.StartEarly(context.Background())
	_ = s.Start(context.Background())
	if name, d := s.Slowest(); name != "c" || d < 200*time.Millisecond {
		t.Errorf("slowest %s %v, want c (wb started early)", name, d)
	}
	_, _ = s.Stop(context.Background())
}

// NewSet builds what the workload enables: counters: true adds the
// device, netfilter, memory and per-node collectors, cpp: true the perf
// one; qdisc is always listed and records only in impaired cells, outside
// only on the local engine (Trial.Local).
func TestNewSetFollowsStudyFlags(t *testing.T) {
	tr := Trial{Cluster: fakeCluster{}, Kernel: func(engine.Node) engine.Kernel { return &fakeKernel{} }}
	for _, c := range []struct {
		w    study.Workload
		want string
	}{
		{study.Workload{}, "cpu,daemons,podsetup,qdisc,outside"},
		{study.Workload{Counters: true}, "cpu,devices,iptables,nftables,trace,daemons,podsetup,nodes,qdisc,bpf,outside"},
		{study.Workload{CPP: true}, "cpu,cpp,daemons,podsetup,qdisc,outside"},
	} {
		s, err := NewSet(c.w, tr)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(s.names, ","); got != c.want {
			t.Errorf("%+v: %s, want %s", c.w, got, c.want)
		}
	}
}

// The device collector sums each group's deltas; memory and pod setup
// read what the kernel and the pods say.
func TestDevicesMemoryPodSetup(t *testing.T) {
	k := &fakeKernel{}
	tr := Trial{Cluster: fakeCluster{}, Kernel: func(engine.Node) engine.Kernel { return k },
		Servers:   []engine.Pod{fakePod{ns: "pod-a"}, fakePod{ns: "pod-b"}},
		Pairs:     []workload.Pair{{Server: fakePod{setup: 2 * time.Millisecond}, Client: fakePod{setup: 4 * time.Millisecond}}},
		FreshPods: true}
	s, err := NewSet(study.Workload{Counters: true}, tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	k.step = 10
	r, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// underlay, tunnel: one device each; pods: two.
	for name, want := range map[string]float64{
		"if_underlay_rx_packets_count": 10, "if_tunnel_tx_dropped_count": 10, "if_pods_rx_packets_count": 20,
		MetricNodeMemoryServer: 42, MetricPodSetup: 3,
	} {
		if r.Metrics[name] != want {
			t.Errorf("%s = %v, want %v", name, r.Metrics[name], want)
		}
	}
	if r.CPU == nil {
		t.Error("no CPU window")
	}
}

type fakeKernel struct{ step uint64 }

func (k *fakeKernel) CPU() engine.Sampler { return fakeSampler{} }
func (k *fakeKernel) Ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	out := make([]ifstats.Counters, len(ifs))
	for i := range out {
		out[i] = ifstats.Counters{RxPackets: 100 + k.step, TxPackets: 100 + k.step, RxDropped: k.step, TxDropped: k.step}
	}
	return out, nil
}
func (k *fakeKernel) MemoryPercent() (float64, error) { return 42, nil }
func (k *fakeKernel) Qdiscs(ifs []netns.Iface) ([]impair.Stats, error) {
	out := make([]impair.Stats, len(ifs))
	for i := range out {
		out[i] = impair.Stats{Packets: 10 * k.step, Drops: uint32(k.step)}
	}
	return out, nil
}
func (k *fakeKernel) CPP([]netns.Iface, []string) (engine.MetricWindow, error) {
	return fakeWindow{}, nil
}

type fakeWindow struct{}

func (fakeWindow) Start(context.Context) error { return nil }
func (fakeWindow) Stop(context.Context) error  { return nil }
func (fakeWindow) Metrics(context.Context) (map[string]float64, error) {
	return map[string]float64{"cpp_total_ns": 1}, nil
}

type fakeSampler struct{}

func (fakeSampler) Start() error { return nil }
func (fakeSampler) Stop() (metrics.Window, error) {
	return metrics.Window{}, nil
}

type fakeCluster struct{}

func (fakeCluster) Server() engine.Node { return fakeNode{} }
func (fakeCluster) Client() engine.Node { return fakeNode{} }
func (fakeCluster) Scale(context.Context, int) ([]engine.Pod, []engine.Pod, error) {
	return nil, nil, nil
}
func (fakeCluster) Close() error { return nil }

type fakeNode struct{}

func (fakeNode) Name() string                { return "n" }
func (fakeNode) Netns() string               { return "" }
func (fakeNode) CPUs() cpuset.Set            { return nil }
func (fakeNode) Underlay() netns.Iface       { return netns.Iface{Name: "eth1"} }
func (fakeNode) Tunnel() (netns.Iface, bool) { return netns.Iface{Name: "vx"}, true }
func (fakeNode) HostVeths(p []engine.Pod) ([]netns.Iface, error) {
	return make([]netns.Iface, len(p)), nil
}
func (fakeNode) PodIface(p engine.Pod) netns.Iface {
	fp, _ := p.(fakePod)
	return netns.Iface{Netns: fp.ns, Name: "eth0"}
}
func (fakeNode) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("no programs here")
}

// fakePod is a pod whose namespace is ns ("" for the node's: a
// host-network pod's, which every such pod shares).
type fakePod struct {
	setup time.Duration
	ns    string
}

func (fakePod) Name() string { return "p" }
func (fakePod) Node() string { return "n" }
func (fakePod) IP() net.IP   { return net.IPv4(10, 0, 0, 1) }
func (fakePod) Start(context.Context, []string) (engine.Process, error) {
	return nil, errors.New("no programs here")
}
func (p fakePod) SetupLatency() time.Duration { return p.setup }

// TestPodSetupFirstTrialOnly: the pods' set-up is one measurement, so it
// goes with a cell's first trial on them only (the runner says which,
// runner.freshPods); later trials on the same pods do not copy it (n
// copies gave a zero-width interval).
func TestPodSetupFirstTrialOnly(t *testing.T) {
	pair := workload.Pair{Server: fakePod{setup: 2 * time.Millisecond}, Client: fakePod{setup: 4 * time.Millisecond}}
	for _, fresh := range []bool{true, false} {
		c := podSetup{Trial{Pairs: []workload.Pair{pair}, FreshPods: fresh}}
		r, err := c.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		v, ok := r.Metrics[MetricPodSetup]
		if ok != fresh || (ok && v != 3) {
			t.Errorf("fresh pods %v: pod_setup_ms %v (present %v), want present %v with 3", fresh, v, ok, fresh)
		}
	}
}
