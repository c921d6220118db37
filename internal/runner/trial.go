package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload"
)

// basePort is iperf3's default port; pair i listens on basePort+i.
const basePort = 5201

// trial runs one repetition of one cell: apply the tuning, run the
// workload with the metric window over its measured part, revert.
func (r *run) trial(ctx context.Context, c engine.Cluster, cell results.Cell, trial int,
	t study.Tuning, w study.Workload, pl placed) (err error) {
	servers := pl.servers
	srv := c.Server()
	tgt := tune.Target{CPUs: r.plan.steerCPUs(), SoftIRQCore: r.softIRQCore(cell.Replicas)}
	tgt.NodeIfaces = append(tgt.NodeIfaces, srv.Underlay())
	if tun, ok := srv.Tunnel(); ok {
		tgt.NodeIfaces = append(tgt.NodeIfaces, tun)
	}
	veths, err := srv.HostVeths(servers)
	if err != nil {
		return err
	}
	tgt.NodeIfaces = append(tgt.NodeIfaces, veths...)
	for _, p := range servers {
		tgt.PodIfaces = append(tgt.PodIfaces, srv.PodIface(p))
	}
	applied, err := tune.Apply(r.journal, r.backend.fs(), t, tgt)
	if err != nil {
		return fmt.Errorf("apply tuning %s: %w", t.Name, err)
	}
	defer func() {
		if rerr := applied.Revert(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("revert tuning %s: %w", t.Name, rerr))
		}
	}()

	s := r.study.Spec
	sampler := r.backend.sampler(srv)
	var cw *cppWindow
	if w.CPP {
		var ifaces []netns.Iface
		for _, p := range servers {
			ifaces = append(ifaces, srv.PodIface(p))
		}
		if cw, err = newCPPWindow(sampler, r.backend.reader(srv), r.plan.cppEvent, ifaces); err != nil {
			return err
		}
		sampler = cw
	}
	var ctr *countersWindow
	if w.Counters {
		ctr = newCountersWindow(sampler, r.backend.reader(srv), srv, []engine.Node{srv, c.Client()}, servers, pl.pairs)
		sampler = ctr
	}
	win := newWindow(sampler, s.Warmup.Duration, s.Duration.Duration)
	var daemons *daemonWatch
	if dl, ok := c.(daemonLister); ok {
		daemons = watchDaemons(dl.Daemons())
	}
	start := time.Now()
	res, err := r.plan.drivers[w.Name].Run(ctx, workload.Trial{
		Pairs: pl.pairs, Background: pl.background, Spec: r.plan.workloads.Apply(w), Duration: s.Duration.Duration, Warmup: s.Warmup.Duration,
		BasePort: basePort, Started: win.started,
	})
	window, werr := win.result()
	if err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("cpu metrics: %w", werr)
	}
	sample := results.Sample{
		Cell: cell, Trial: trial, Start: start, End: time.Now(),
		Metrics: res.Metrics, PerReplica: res.PerReplica, Series: res.Series, Cores: window.Cores,
	}
	r.plan.workloads.Mark(w, sample.Metrics)
	if cw != nil {
		for k, v := range cw.res.Metrics {
			sample.Metrics[k] = v
		}
	}
	if ctr != nil {
		for k, v := range ctr.metrics {
			sample.Metrics[k] = v
		}
	}
	if daemons != nil {
		for k, v := range daemons.metrics() {
			sample.Metrics[k] = v
		}
	}
	// Pod network setup latency is recorded on every run (issue: the
	// papers compare CNIs on it), not only with counters: true.
	if _, ok := sample.Metrics[MetricPodSetup]; !ok {
		if ms, ok := podSetupMs(pl.pairs); ok {
			sample.Metrics[MetricPodSetup] = ms
		}
	}
	for i := range sample.Cores {
		sample.Cores[i].Node = r.nodeOf(sample.Cores[i].CPU)
	}
	if err := r.out.AppendSample(sample); err != nil {
		return err
	}
	if err := r.out.AppendCPU(window.CPUPoints(cell, trial)); err != nil {
		return err
	}
	r.samples++
	if t.IsBaseline() {
		r.noteSoftIRQCore(cell.Replicas, window.Cores)
	}
	return nil
}

// nodeOf names the node a CPU is pinned to, "" when nodes share CPUs.
func (r *run) nodeOf(cpu int) string {
	switch {
	case r.plan.serverCPUs.Contains(cpu) && r.plan.clientCPUs.Contains(cpu):
		return "server+client"
	case r.plan.serverCPUs.Contains(cpu):
		return "server"
	case r.plan.clientCPUs.Contains(cpu):
		return "client"
	}
	return ""
}

// softIRQCore is the core rps-7 excludes: the one that took most NET_RX
// softirqs at baseline with the same replica count, else the highest CPU
// of the server node (the paper's core 3 of 4).
func (r *run) softIRQCore(replicas int) int {
	if c, ok := r.softirqCore[replicas]; ok {
		return c
	}
	cpus := r.plan.steerCPUs()
	return cpus[len(cpus)-1]
}

func (r *run) noteSoftIRQCore(replicas int, cores []results.CoreStat) {
	var own []results.CoreStat
	for _, c := range cores {
		if r.plan.steerCPUs().Contains(c.CPU) {
			own = append(own, c)
		}
	}
	if len(own) > 0 {
		r.softirqCore[replicas] = metrics.BusiestNetRxCPU(own)
	}
}

// window samples CPU metrics over the measured part of a trial: from
// warm-up end after the clients started to the end of the duration.
type window struct {
	sampler          cpuSampler
	warmup, duration time.Duration
	once             sync.Once
	done             chan struct{}
	cancel           chan struct{}
	w                metrics.Window
	err              error
}

func newWindow(s cpuSampler, warmup, duration time.Duration) *window {
	return &window{sampler: s, warmup: warmup, duration: duration,
		done: make(chan struct{}), cancel: make(chan struct{})}
}

// started is the workload's Started callback.
func (w *window) started(t0 time.Time) {
	w.once.Do(func() { go w.sample(t0) })
}

func (w *window) sample(t0 time.Time) {
	defer close(w.done)
	if !sleepUntil(t0.Add(w.warmup), w.cancel) {
		w.err = errors.New("trial ended before its warm-up did")
		return
	}
	s := w.sampler
	if err := s.Start(); err != nil {
		w.err = err
		return
	}
	sleepUntil(t0.Add(w.duration), w.cancel)
	w.w, w.err = s.Stop()
}

// result waits for the window; if the workload ended early the window is
// closed at once with what it has.
func (w *window) result() (metrics.Window, error) {
	started := false
	w.once.Do(func() { close(w.done) }) // never started: nothing to wait for
	select {
	case <-w.done:
		started = true
	default:
	}
	if !started {
		close(w.cancel)
		<-w.done
	}
	if w.w.Cores == nil && w.err == nil {
		return w.w, errors.New("no metric window: the workload never reported that it started")
	}
	return w.w, w.err
}

func sleepUntil(t time.Time, cancel <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-cancel:
		return false
	}
}
