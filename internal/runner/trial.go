package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// basePort is iperf3's default port; pair i listens on basePort+i (and its
// Service, knob service-path, forwards that port).
const basePort = knob.BasePort

// trial runs one repetition of one cell: apply the trial's knobs (the
// tuning, the impairment), run the workload with the collectors over its
// measured window, revert the knobs, and return the sample (runUnit
// decides whether it counts). A knob that does not revert is a
// fatalError: the host is no longer in the state the next trial assumes.
func (r *run) trial(ctx context.Context, c engine.Cluster, cell results.Cell, trial int,
	t study.Tuning, w study.Workload, pl placed, dtgt *knob.Target) (sample results.Sample, err error) {
	kt := *dtgt
	kt.Tuning, kt.Workload, kt.Measured = t, w, pl.servers
	kt.Impairment, _ = r.study.Impairment(cell.Impairment)
	kt.MeasuredClients, kt.Front = nil, nil
	for _, p := range pl.pairs {
		kt.MeasuredClients = append(kt.MeasuredClients, p.Client)
	}
	kt.SteerCPUs, kt.SoftIRQCore = r.plan.steerCPUs(), r.softIRQCore(study.SideServer, cell.Replicas)
	kt.ClientSteerCPUs, kt.ClientSoftIRQCore = r.plan.clientSteerCPUs(), r.softIRQCore(study.SideClient, cell.Replicas)
	kt.Tuned = nil
	applied, err := knob.Apply(ctx, knob.Trial, &kt)
	if rerr := (*knob.RevertError)(nil); errors.As(err, &rerr) {
		// A knob half-applied and not taken back: measuring on would
		// measure the leftover (and journal it as the old value).
		return sample, &fatalError{err}
	}
	if err != nil {
		return sample, err
	}
	defer func() {
		if rerr := applied.Revert(); rerr != nil {
			err = &fatalError{errors.Join(err, rerr)}
		}
	}()
	if err := r.recordTuning(t.Name, kt.Tuned); err != nil {
		return sample, &fatalError{err}
	}
	if err := r.recordImpairment(cell, kt.Impairment, kt.Impaired); err != nil {
		return sample, &fatalError{err}
	}
	start := time.Now()
	res, col, sp, err := r.measure(ctx, c, w, pl, targetPairs(pl.pairs, w.Target, kt.Front, r.plan.remote), &kt, trial, r.freshPods(cell, trial))
	if err != nil {
		return sample, err
	}
	sample = results.Sample{
		Cell: cell, Trial: trial, Start: start, End: time.Now(),
		Metrics: res.Metrics, PerReplica: res.PerReplica, Series: res.Series, Cores: col.CPU.Cores,
		Noise: trialNoise(col, sp),
	}
	if col.Client != nil {
		sample.ClientCores = col.Client.Cores
	}
	if sample.Metrics == nil {
		sample.Metrics = map[string]float64{}
	}
	if err := errors.Join(r.onceInNotes("warning", append(res.Warnings, col.Warnings...)), r.onceInNotes("note", col.Notes)); err != nil {
		return sample, &fatalError{err}
	}
	r.plan.workloads.Mark(w, sample.Metrics)
	for k, v := range col.Metrics {
		sample.Metrics[k] = v
	}
	if err := offPath(sample, kt.Impaired, r.study.Spec.NoiseGuard()); err != nil {
		return sample, err
	}
	for i := range sample.Cores {
		sample.Cores[i].Node = r.nodeOf(sample.Cores[i].CPU)
	}
	r.lastCPU = col.CPU.CPUPoints(cell, trial)
	return sample, nil
}

// trialNoise is the noise guard's record of a trial (results.Noise): the
// server node's steal over its cores online at the window's end, the
// client node's where it was sampled apart (a node with a kernel of its
// own, a cluster's: steal there slows the sender as steal on the server
// slows the receiver, so the guard judges both), the CPU of processes
// outside the run, and how the measured window went.
func trialNoise(col collect.Result, sp span) *results.Noise {
	n := &results.Noise{StealPct: stealPct(col.CPU.Online()), OutsidePct: col.OutsidePct,
		WindowPct: sp.Pct, WindowLateS: sp.Late.Seconds(), WindowSlowest: sp.Slowest, EndLateS: sp.EndLate.Seconds()}
	if col.Client != nil {
		cs := stealPct(col.Client.Online())
		n.ClientStealPct = &cs
	}
	return n
}

// measure runs the workload with the collectors the variant enables over
// its measured window, and says how that window matched its plan.
func (r *run) measure(ctx context.Context, c engine.Cluster, w study.Workload, pl placed, pairs []workload.Pair, kt *knob.Target, trial int, fresh bool) (workload.Result, collect.Result, span, error) {
	set, err := collect.NewSet(w, collect.Trial{Cluster: c, Kernel: r.engine.Kernel, Servers: pl.servers, Background: pl.backgroundServers(),
		Pairs: pl.pairs, Driven: pairs, Impaired: kt.Impaired, Counters: kt.Counters(), Local: !r.plan.remote, SharedKernel: r.plan.sharedKernel,
		Machine: r.plan.localMachine(), FreshPods: fresh, PacketProcesses: datapath.PacketProcessesOf(r.plan.datapaths[kt.Datapath.Name].Built)})
	if err != nil {
		return workload.Result{}, collect.Result{}, span{}, err
	}
	s := r.study.Spec
	if err := set.StartEarly(ctx); err != nil {
		return workload.Result{}, collect.Result{}, span{}, err
	}
	drv := r.plan.drivers[w.Name]
	win := newWindow(set, s.Warmup.Duration, s.Duration.Duration)
	if drv.Describe().Task {
		// A task (a pod start-up burst) is measured from its start to its
		// end, however long that is.
		win = newTaskWindow(set)
	}
	starter, _ := c.(engine.PodStarter)
	res, err := drv.Run(ctx, workload.Trial{
		Pairs: pairs, Background: backgroundPairs(pl.background, w.Target, r.plan.remote), Spec: r.plan.workloads.Apply(w), Duration: s.Duration.Duration, Warmup: s.Warmup.Duration,
		BasePort: basePort, Started: win.started, Starter: starter,
	})
	end := time.Now()
	col, werr := win.result()
	if err != nil {
		return res, col, span{}, err
	}
	if werr != nil {
		return res, col, span{}, fmt.Errorf("cpu metrics: %w", werr)
	}
	return res, col, win.span(end), nil
}

// targetPairs are the pairs as the driver sees them for the workload's
// target: servers fronted by the ClusterIPs knob service-path set
// (service, hairpin), the client inside the server pod (hairpin), or
// the kube engine's servers reached at their pod IPs (pod). The
// collectors keep the real pods.
func targetPairs(pairs []workload.Pair, target string, front []net.IP, remote bool) []workload.Pair {
	out := make([]workload.Pair, len(pairs))
	for i, p := range pairs {
		out[i] = p
		switch {
		case target == study.TargetPod && remote:
			out[i].Server = engine.Unfront(p.Server)
		case (target == study.TargetService || target == study.TargetHairpin) && i < len(front):
			out[i].Server = engine.Front(p.Server, front[i])
		}
		if target == study.TargetHairpin {
			out[i].Client = p.Server
		}
	}
	return out
}

// backgroundPairs are the background pairs as the driver sees them: at
// their pod IPs on a cluster when the workload targets pods, as its
// measured pairs are; else as the engine gives them (the kube engine's
// Services; knob service-path fronts measured servers only, and a
// hairpin moves measured clients only).
func backgroundPairs(pairs []workload.Pair, target string, remote bool) []workload.Pair {
	if target != study.TargetPod {
		return pairs
	}
	return targetPairs(pairs, target, nil, remote)
}

// store writes a counted trial's CPU points and sample, the sample last
// (results.AppendTrial). A failed write ends the run (fatalError): a run
// that cannot record must not go on.
func (r *run) store(sample results.Sample, t study.Tuning) error {
	if err := r.out.AppendTrial(sample, r.lastCPU); err != nil {
		return &fatalError{err}
	}
	r.samples++
	if t.IsBaseline() {
		r.noteSoftIRQCore(sample)
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

// softirqKey is an end of the pairs (study.SideServer or SideClient) and
// a replica count.
type softirqKey struct {
	end      string
	replicas int
}

// softIRQCore is the core rps-7 excludes at one end of the pairs: the one
// of that end's CPUs that took most NET_RX softirqs at baseline with the
// same replica count, else -1 (tune takes the end's highest CPU, the
// paper's core 3 of 4).
func (r *run) softIRQCore(end string, replicas int) int {
	if c, ok := r.softirqCore[softirqKey{end, replicas}]; ok {
		return c
	}
	return -1
}

// noteSoftIRQCore learns each end's busiest NET_RX core from a baseline
// trial: the server's from its cores, the client's from the same cores
// when the nodes share one kernel (emulated nodes), else from the client
// node's own (a cluster's).
func (r *run) noteSoftIRQCore(s results.Sample) {
	client := s.ClientCores
	if r.plan.sharedKernel {
		client = s.Cores
	}
	r.learnSoftIRQCore(softirqKey{study.SideServer, s.Cell.Replicas}, r.plan.steerCPUs(), s.Cores)
	r.learnSoftIRQCore(softirqKey{study.SideClient, s.Cell.Replicas}, r.plan.clientSteerCPUs(), client)
}

// learnSoftIRQCore keeps the busiest NET_RX core among an end's CPUs; a
// trial with no NET_RX there keeps what was learned before.
func (r *run) learnSoftIRQCore(k softirqKey, cpus cpuset.Set, cores []results.CoreStat) {
	var own []results.CoreStat
	for _, c := range cores {
		if cpus.Contains(c.CPU) {
			own = append(own, c)
		}
	}
	if core := metrics.BusiestNetRxCPU(own); core >= 0 {
		if r.softirqCore == nil {
			r.softirqCore = map[softirqKey]int{}
		}
		r.softirqCore[k] = core
	}
}

// freshPods reports whether trial is its cell's first on the current
// cluster's pods (or an attempt at that trial again): their set-up is
// recorded with it. A run of one datapath sets its pods up once per
// replica count, a run of several once per round (interleave.go).
func (r *run) freshPods(cell results.Cell, trial int) bool {
	if r.firstOn == nil {
		r.firstOn = map[results.Cell]firstTrial{}
	}
	on, ok := r.firstOn[cell]
	if !ok || on.cluster != r.clusters {
		r.firstOn[cell] = firstTrial{r.clusters, trial}
		return true
	}
	return on.trial == trial
}

// firstTrial is a cell's first trial on a cluster's pods (freshPods).
type firstTrial struct{ cluster, trial int }
