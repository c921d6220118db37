// Package collect holds the node-level collectors: each records one kind
// of metric on the nodes over a trial's measured window (from warm-up end
// to the end of the duration), on either engine. A collector reads a node
// through engine.Kernel (this kernel on the local engine, the node's
// agent on kube) or runs a program on it through engine.Node.Start.
//
// As Prometheus node_exporter's collectors, each is one file behind one
// small interface, registered by name in List, the one list; the study
// switches them on per workload (cpp: true, counters: true). A new metric
// source is one file and one line in List.
package collect

import (
	"context"
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// Collector records over one window: Start at its beginning, Stop at its
// end. Stop is called only after a successful Start. Costly analysis of
// what was recorded belongs in Finish (finisher), after every window.
type Collector interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) (Result, error)
}

// Result is what a collector recorded.
type Result struct {
	// Metrics are added to the trial's sample (samples.jsonl).
	Metrics map[string]float64
	// CPU is the per-core window (the cpu collector's; cpu.jsonl).
	CPU *metrics.Window
	// Client is the client node's per-core window when it runs its own
	// kernel (the cpu collector's): its cores and, over those online at
	// the end, its steal for the noise guard.
	Client *metrics.Window
	// OutsidePct is the outside collector's share of the machine's CPU
	// used by processes outside the run (the noise guard's input); nil
	// when not measured.
	OutsidePct *float64
	// Warnings say why a collector left its metrics out of a trial it did
	// not fail (a node that cannot trace); the runner reports each once.
	Warnings []string
	// Notes say how to read metrics that are as they should be (emulated
	// nodes sharing one machine); the runner reports each once.
	Notes []string
}

// Trial is what the collectors of one trial observe.
type Trial struct {
	Cluster engine.Cluster
	// Kernel reads a node's kernel (engine.Engine.Kernel).
	Kernel func(engine.Node) engine.Kernel
	// Servers are the measured server pods, on Cluster.Server().
	Servers []engine.Pod
	// Background are the background pairs' server pods, on
	// Cluster.Server() too: their load runs through the window (none
	// without background, or at 0 connections).
	Background []engine.Pod
	// Pairs are the measured pairs.
	Pairs []workload.Pair
	// Driven are the pairs as the workload's driver addresses them: a
	// server fronted by its Service's ClusterIP where the target is the
	// Service.
	Driven []workload.Pair
	// Impaired is where the trial's impairment sits (the knob impairment
	// fills knob.Target.Impaired); no devices when unimpaired.
	Impaired engine.Impaired
	// Counters are the BPF counters on the trial's path (knob.Target.Counters).
	Counters []engine.Counter
	// Local is set when the nodes are this machine (the local engine), so
	// what else runs on it bears on the trial.
	Local bool
	// Machine is the CPUs the local engine's nodes share (cnibench's
	// cpuset, hostcpus.Machine): an unpinned node's are these, not every
	// CPU of the machine's /proc/stat. Nil on a cluster.
	Machine cpuset.Set
	// SharedKernel is set when both nodes run on one kernel: the local
	// engine's, or cluster nodes with one boot ID (engine.Facts).
	SharedKernel bool
	// FreshPods is set on a cell's first trial on its pods (and on
	// attempts at that trial again): the one that records their set-up.
	FreshPods bool
	// PacketProcesses are the datapath's own processes that do work for
	// every packet (datapath.PacketProcesses: flannel-udp's flanneld),
	// whose samples the CPU cost per packet counts.
	PacketProcesses []string
}

// Entry describes a collector.
type Entry struct {
	// Name identifies the collector in errors and docs.
	Name string
	// Description says what it records, where, and how.
	Description string
	// Metrics are the sample metrics it adds ("*" stands for a part of
	// the name), or cpu.jsonl for the per-core window.
	Metrics []string
	// Programs are what it runs on a node (perf, iptables-save), which a
	// cluster's image must hold; none when it reads files only.
	Programs []string
	// Enabled says whether a workload variant of the study switches it on.
	Enabled func(w study.Workload) bool
	// WholeTrial starts it before the workload's clients (Set.StartEarly)
	// instead of after the warm-up, so what a connection does once, at
	// its start, is inside its window: the iptables and nftables path
	// counts then include the nat chains a connection's first packet
	// meets, as Table III counts them.
	WholeTrial bool
	// New makes the collector for one trial.
	New func(t Trial) (Collector, error)
}

// List is every collector, in the order they start (they stop in the
// reverse order, so the CPU window brackets all the others; what one
// does after its window, finisher, waits until all have closed).
var List = []Entry{
	cpuEntry,
	cppEntry,
	devicesEntry,
	iptablesEntry,
	nftablesEntry,
	traceEntry,
	daemonsEntry,
	podSetupEntry,
	nodesEntry,
	qdiscEntry,
	bpfEntry,
	outsideEntry,
}

func always(study.Workload) bool { return true }

// Programs lists, in list order, the programs the collectors w enables
// run on the nodes.
func Programs(w study.Workload) []string {
	var out []string
	for _, e := range List {
		if e.Enabled(w) {
			out = append(out, e.Programs...)
		}
	}
	return out
}

// Set is the collectors a workload variant enables, run as one.
type Set struct {
	names   []string
	cs      []Collector
	early   []bool
	started []bool
	// took is how long each collector's Start took.
	took []time.Duration
	// opened is when Start had started them all.
	opened time.Time
}

// NewSet makes the collectors w enables for trial t.
func NewSet(w study.Workload, t Trial) (*Set, error) {
	s := &Set{}
	for _, e := range List {
		if !e.Enabled(w) {
			continue
		}
		c, err := e.New(t)
		if err != nil {
			return nil, fmt.Errorf("collector %s: %w", e.Name, err)
		}
		s.names = append(s.names, e.Name)
		s.cs = append(s.cs, c)
		s.early = append(s.early, e.WholeTrial)
	}
	s.started = make([]bool, len(s.cs))
	s.took = make([]time.Duration, len(s.cs))
	return s, nil
}

// StartEarly starts the whole-trial collectors, before the workload's
// clients start; on an error the ones started are stopped.
func (s *Set) StartEarly(ctx context.Context) error { return s.start(ctx, true) }

// Start opens the window: it starts every other collector in list order,
// then tells the whole-trial ones the window has begun (windowStarter).
// They hear it last so that what they do then (ending an nf_tables
// trace took 1.4-3.9 s in an emulated guest) does not delay the others'
// first readings. If one fails, those already started are stopped and
// its error returned.
func (s *Set) Start(ctx context.Context) error {
	if err := s.start(ctx, false); err != nil {
		return err
	}
	s.opened = time.Now()
	for i, c := range s.cs {
		if ws, ok := c.(windowStarter); ok && s.early[i] && s.started[i] {
			if err := ws.WindowStart(ctx); err != nil {
				_, _ = s.Stop(ctx)
				return fmt.Errorf("collector %s: %w", s.names[i], err)
			}
		}
	}
	return nil
}

// Opened is when Start had started every collector: the window's real
// beginning.
func (s *Set) Opened() time.Time { return s.opened }

// windowStarter is a whole-trial collector that also hears when the
// measured window begins (the trace collector stops marking packets
// there, so its marking costs the measured packets nothing).
type windowStarter interface {
	WindowStart(ctx context.Context) error
}

func (s *Set) start(ctx context.Context, early bool) error {
	for i, c := range s.cs {
		if s.early[i] != early || s.started[i] {
			continue
		}
		t0 := time.Now()
		if err := c.Start(ctx); err != nil {
			_, _ = s.Stop(ctx)
			return fmt.Errorf("collector %s: %w", s.names[i], err)
		}
		s.started[i] = true
		s.took[i] = time.Since(t0)
	}
	return nil
}

// Slowest names the window's collector whose Start took longest, and
// how long: what delayed a window that opened late. Whole-trial ones,
// started before the workload, are not counted.
func (s *Set) Slowest() (string, time.Duration) {
	name, d := "", time.Duration(0)
	for i, t := range s.took {
		if t > d && !s.early[i] {
			name, d = s.names[i], t
		}
	}
	return name, d
}

// finisher is a collector with work to do after its window that must
// load no collector's window: cpp's perf report, seconds at 100% of a
// core on the server node, which the cpu collector, stopping last,
// counted in the trial's per-core CPU and softirq figures. Set.Stop
// calls Finish once every collector has stopped, after a successful
// Stop, and adds its result to Stop's.
type finisher interface {
	Finish(ctx context.Context) (Result, error)
}

// Stop stops the started collectors in reverse order, then finishes
// those that have work left (finisher), and merges what they recorded.
// The error is that of the collector first in the list that failed (the
// CPU window's before the others').
func (s *Set) Stop(ctx context.Context) (Result, error) {
	out := Result{Metrics: map[string]float64{}}
	errs := make([]error, len(s.cs))
	var finish []int
	for i := len(s.cs) - 1; i >= 0; i-- {
		if !s.started[i] {
			continue
		}
		s.started[i] = false
		r, err := s.cs[i].Stop(ctx)
		errs[i] = err
		out.add(r)
		if _, ok := s.cs[i].(finisher); ok && err == nil {
			finish = append(finish, i)
		}
	}
	for _, i := range finish {
		r, err := s.cs[i].(finisher).Finish(ctx)
		errs[i] = err
		out.add(r)
	}
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// add merges what one collector recorded into r.
func (r *Result) add(o Result) {
	for k, v := range o.Metrics {
		r.Metrics[k] = v
	}
	if o.CPU != nil {
		r.CPU = o.CPU
	}
	if o.Client != nil {
		r.Client = o.Client
	}
	if o.OutsidePct != nil {
		r.OutsidePct = o.OutsidePct
	}
	r.Warnings = append(r.Warnings, o.Warnings...)
	r.Notes = append(r.Notes, o.Notes...)
}
