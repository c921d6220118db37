// Package localengine is the local engine as the runner sees it
// (engine.Engine): emulated nodes are network namespaces of this machine
// (package engine/local builds them), knobs are this kernel's files, and
// collectors read this kernel. It is a package apart from engine/local
// because it reads perf (metrics/cpp), whose tests build clusters with
// engine/local.
package localengine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/sysfs"
	"github.com/cnibench/cnibench/internal/tune"
)

// Engine runs studies on network namespaces of this machine.
type Engine struct {
	procRoot string
	// cppEvent is what CPP trials sample (chosen in preflight).
	cppEvent cpp.Event
	// built counts the clusters Up made; settle is the pause before each
	// one after the first (clusterSettle).
	built  int
	settle time.Duration
}

// clusterSettle is the pause before a cluster that follows another. The
// kernel destroys deleted namespaces afterwards, on a workqueue
// (net/core/net_namespace.c, cleanup_net: their devices unregistered
// under the RTNL lock, RCU grace periods), and a namespace created
// meanwhile waits for it. A cluster's first pods are the measured ones,
// so their set-up carried the previous cluster's teardown: of 42
// clusters built right after another (cni-compare entries with a
// start-up burst before them), 6 had a first pod wait 74-79 ms for its
// namespace (2 ms otherwise); after this pause, none of 60.
const clusterSettle = 1500 * time.Millisecond

// New returns the local engine; procRoot is where /proc is read for
// metrics ("" is /proc; tests may change it).
func New(procRoot string) *Engine { return &Engine{procRoot: procRoot, settle: clusterSettle} }

// Name implements engine.Engine.
func (*Engine) Name() string { return "local" }

// Preflight checks what of the study only this engine refuses, root,
// each datapath's kernel features and wiring, the workloads' programs,
// perf, and the per-trial knobs' kernel features.
func (e *Engine) Preflight(ctx context.Context, s *study.Study, n engine.Needs) (engine.Facts, error) {
	// The emulated nodes are namespaces of this one kernel.
	f := engine.Facts{SharedKernel: true}
	if err := checkStudy(s); err != nil {
		return f, err
	}
	if os.Geteuid() != 0 {
		return f, errors.New("the local engine needs root (it creates network namespaces and writes sysfs); run with sudo")
	}
	if err := e.datapaths(s, n, &f); err != nil {
		return f, err
	}
	if n.CheckTools != nil {
		if err := n.CheckTools(); err != nil {
			return f, err
		}
	}
	ev, note, err := cppPreflight(ctx, s, cpp.Check, cpp.RunPerf)
	if err != nil {
		return f, err
	}
	if note != "" {
		e.cppEvent = ev
		f.Notes = append(f.Notes, note)
	}
	for _, k := range n.Knobs {
		if err := probe.Require(k.Features...); err != nil {
			return f, k.Refusal("", err)
		}
	}
	if note := checkIdle(e.procRoot); note != "" {
		f.Warnings = append(f.Warnings, note)
	}
	return f, nil
}

// datapaths keeps the study's datapaths this machine can run; the others
// are an error, or with spec.skipUnavailable a note.
func (e *Engine) datapaths(s *study.Study, n engine.Needs, f *engine.Facts) error {
	var keep []study.Datapath
	var skipped skips
	var whyNot []error
	for _, d := range n.Datapaths {
		err := probe.Require(d.Features...)
		if err == nil {
			err = local.CheckWiring(d.Built, d.Spec.Wiring, nil)
		}
		if err == nil {
			err = requireBrNetfilter(d, f)
		}
		if err != nil {
			if !s.Spec.SkipUnavailable {
				need := engine.Need{What: "datapath " + d.Spec.Name, Field: d.Field}
				if len(n.Datapaths) > 1 {
					need.Without = "--set skipUnavailable=true, which runs the others and notes it"
				}
				return need.Refusal("", err)
			}
			skipped.add(d.Spec.Name, err)
			whyNot = append(whyNot, err)
			continue
		}
		keep = append(keep, d.Spec)
	}
	if len(keep) == 0 {
		return noneCanRun(len(n.Datapaths), skipped, whyNot)
	}
	f.Notes = append(f.Notes, skipped.notes()...)
	// The run, its study.yaml and its report cover what actually ran.
	s.Spec.Datapaths = keep
	return nil
}

// noneCanRun refuses a study none of whose datapaths this machine can
// build, where spec.skipUnavailable would drop those it cannot: nothing
// would be left to run, so no datapath is "skipped". It is an error at
// spec.datapaths (the study's line, or the --set that gave the list),
// with each datapath's reason (datapaths of one reason named together);
// it unwraps to the probes' errors.
func noneCanRun(count int, skipped skips, errs []error) error {
	var why []string
	for _, w := range skipped.why {
		names := skipped.names[w]
		head := "datapath "
		if len(names) > 1 {
			head = "datapaths "
		}
		why = append(why, head+strings.Join(names, ", ")+": "+w)
	}
	what := "the study's one datapath cannot be built here"
	if count > 1 {
		what = fmt.Sprintf("none of the study's %d datapaths can be built here", count)
	}
	return study.At("spec.datapaths", &reasons{
		msg:  what + ", so skipUnavailable would leave nothing to run: " + strings.Join(why, "; "),
		errs: errs,
	})
}

// reasons is an error of one text that unwraps to the errors it tells.
type reasons struct {
	msg  string
	errs []error
}

func (r *reasons) Error() string   { return r.msg }
func (r *reasons) Unwrap() []error { return r.errs }

// Up builds the emulated nodes and the datapath between them.
func (e *Engine) Up(ctx context.Context, r engine.Run, d engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	sd := d.Spec
	de := results.DatapathEnv{
		Type: sd.Type, Implementation: sd.Implementation, Wiring: sd.Wiring,
		PodMTU: d.Built.MTU(r.Study.Spec.Nodes.UnderlayMTU),
	}
	if datapath.IsHostNetwork(d.Built) {
		de.PodMTU = r.Study.Spec.Nodes.UnderlayMTU
	}
	if err := e.settleBeforeUp(ctx); err != nil {
		return nil, de, err
	}
	c, err := local.Up(ctx, local.Config{
		RunID: r.ID, Datapath: d.Built, UnderlayMTU: r.Study.Spec.Nodes.UnderlayMTU,
		Wiring: sd.Wiring, StateDir: r.StateDir,
		ServerCPUs: r.ServerCPUs, ClientCPUs: r.ClientCPUs,
		Recorder: r.Journal, Kill: cleanup.KillInNetns,
	})
	if err != nil {
		return nil, de, err
	}
	recordMode(&de, d.Built)
	return c, de, nil
}

// settleBeforeUp waits e.settle before every cluster but the first.
func (e *Engine) settleBeforeUp(ctx context.Context) error {
	e.built++
	if e.built == 1 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(e.settle):
		return nil
	}
}

// FS implements engine.Engine: the knobs are this kernel's.
func (*Engine) FS(engine.Node) tune.FS { return tune.LocalFS{} }

// Kernel implements engine.Engine: emulated nodes share this kernel.
func (e *Engine) Kernel(engine.Node) engine.Kernel {
	return kernel{procRoot: e.procRoot, cppEvent: e.cppEvent}
}

// Describe implements engine.Engine.
func (e *Engine) Describe(r engine.Run, c engine.Cluster, env *results.Env) {
	env.NodeCPUs = map[string][]int{
		local.ServerNode: r.ServerCPUs,
		local.ClientNode: r.ClientCPUs,
	}
	env.Offloads = map[string]map[string]bool{}
	for _, n := range []engine.Node{c.Server(), c.Client()} {
		ifaces := []netns.Iface{n.Underlay()}
		if t, ok := n.Tunnel(); ok {
			ifaces = append(ifaces, t)
		}
		for _, ifc := range ifaces {
			if f := offload.Features(n, ifc.Name); f != nil {
				env.Offloads[n.Name()+"/"+ifc.Name] = f
			}
		}
	}
	if len(r.ServerCPUs) == 0 && len(r.ClientCPUs) == 0 {
		env.Notes = append(env.Notes, "nodes share every CPU of the machine (no spec.nodes.*.cpus): per-core figures show the whole machine, where server and client work mix")
	}
	env.Notes = append(env.Notes, "local engine: nodes are network namespaces joined by a veth underlay; packets never touch a physical NIC, so NIC interrupts, hardware offloads and wire speed are not part of the measurement")
}

// The run's journal is the local engine's recorder of namespaces and of
// the CNI state directory.
var _ local.DirRecorder = (*journal.Journal)(nil)

// kernel reads this machine's kernel.
type kernel struct {
	procRoot string
	cppEvent cpp.Event
}

// CPU reads the machine's /proc, and each CPU's polling time from /sys:
// emulated nodes share its kernel, so per-core figures cover every CPU
// (each labelled with its node).
func (k kernel) CPU() engine.Sampler {
	return metrics.NewSampler(k.procRoot, time.Second).WithIdle(sysfs.Dir("/sys"))
}

func (kernel) Ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	out := make([]ifstats.Counters, len(ifs))
	for i, ifc := range ifs {
		c, err := ifstats.Read(ifc)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// MemoryPercent reads the machine's memory: emulated nodes share it.
func (k kernel) MemoryPercent() (float64, error) {
	root := k.procRoot
	if root == "" {
		root = "/proc"
	}
	return metrics.MemoryPercent(filepath.Join(root, "meminfo"))
}

// Qdiscs reads the netem counters with netlink.
func (kernel) Qdiscs(ifs []netns.Iface) ([]impair.Stats, error) { return impair.StatsOf(ifs) }

// CPP samples with perf the event preflight chose for this machine.
func (k kernel) CPP(ifs []netns.Iface, procs []string) (engine.MetricWindow, error) {
	m, err := cpp.DefaultMap()
	if err != nil {
		return nil, err
	}
	return cppWindow{rec: &cpp.Recorder{Map: m, Event: k.cppEvent, Ifaces: ifs, Commands: procs}}, nil
}
