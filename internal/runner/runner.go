// Package runner executes a study on the local engine: it checks every
// prerequisite before touching the host, builds the emulated cluster per
// datapath, runs each cell's trials with its tuning applied and reverted,
// stores every trial as it ends, and builds the report.
//
// Order of work: per datapath and replica count the pods are built once;
// within that, trial k of every tuning runs before trial k+1 of any, so
// slow drift of a shared machine spreads evenly over the configurations
// instead of biasing the one that ran last.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// Options configure one run.
type Options struct {
	Study      *study.Study
	OutDir     string
	JournalDir string // default journal.DefaultDir
	Progress   progress.Reporter
	Log        *slog.Logger
	// Engine selects where nodes and pods come from ("local", default).
	Engine string
	// ProcRoot is where /proc is read for metrics (tests may change it).
	ProcRoot string
	// Kube configures the kube engine (Engine "kube").
	Kube *kube.Config
}

func newBackend(opt Options) (backend, error) {
	switch opt.Engine {
	case "", "local":
		return localBackend{procRoot: opt.ProcRoot}, nil
	case "kube":
		return newKubeBackend(opt)
	}
	return nil, fmt.Errorf("unknown engine %q (available: local, kube)", opt.Engine)
}

// PreflightError is a problem found before anything touched the host.
type PreflightError struct{ Err error }

func (e *PreflightError) Error() string { return e.Err.Error() }
func (e *PreflightError) Unwrap() error { return e.Err }

// IsPreflight reports whether err was found before the run changed anything.
func IsPreflight(err error) bool {
	var p *PreflightError
	return errors.As(err, &p)
}

type plan struct {
	// notes found in preflight go to env.json and the terminal.
	notes   []string
	drivers map[string]workload.Driver
	// cppEvent is what CPP trials sample (chosen in preflight).
	cppEvent   cpp.Event
	serverCPUs cpuset.Set
	clientCPUs cpuset.Set
	machine    cpuset.Set
	// workloads are the options resolved for this machine (workloadopts.go).
	workloads *workload.Prepared
}

// Preflight checks privileges, kernel features, tools and CPU sets. It
// changes nothing on the host.
func preflight(ctx context.Context, b backend, s *study.Study) (*plan, error) {
	p := &plan{drivers: map[string]workload.Driver{}, machine: cpuset.Range(runtime.NumCPU())}
	if err := b.preflight(ctx, s, p); err != nil {
		return nil, &PreflightError{err}
	}
	if remoteKernel(b) {
		if err := kubeUnsupported(s); err != nil {
			return nil, &PreflightError{err}
		}
	}
	for _, w := range s.Variants() {
		d, err := registry.Lookup(w.Tool)
		if err != nil {
			return nil, &PreflightError{err}
		}
		// On a cluster the tools run in the workload image, not on this
		// machine; the kube engine checks the image through its agents.
		if !remoteKernel(b) {
			if err := d.Check(); err != nil {
				return nil, &PreflightError{fmt.Errorf("workload %s: %w", w.Name, err)}
			}
		}
		p.drivers[w.Name] = d
	}
	// A remote node's agent chooses its own perf event (its PMU is not
	// this machine's) and checks perf there.
	if !remoteKernel(b) {
		if err := cppPreflight(ctx, s, p, cpp.RunPerf); err != nil {
			return nil, &PreflightError{err}
		}
	}
	for _, t := range s.Spec.Tunings {
		if remoteKernel(b) {
			break // the nodes' kernels are checked by their agents
		}
		if t.RPS != nil {
			if err := probe.Require(probe.RPS); err != nil {
				return nil, &PreflightError{fmt.Errorf("tuning %s: %w", t.Name, err)}
			}
		}
		if t.RFS != nil {
			if err := probe.Require(probe.RFS); err != nil {
				return nil, &PreflightError{fmt.Errorf("tuning %s: %w", t.Name, err)}
			}
		}
	}
	var err error
	if p.serverCPUs, err = nodeCPUs("server", s.Spec.Nodes.Server.CPUs, p.machine); err != nil {
		return nil, &PreflightError{err}
	}
	if p.clientCPUs, err = nodeCPUs("client", s.Spec.Nodes.Client.CPUs, p.machine); err != nil {
		return nil, &PreflightError{err}
	}
	if err := prepareWorkloads(s, p, remoteKernel(b)); err != nil {
		return nil, &PreflightError{err}
	}
	for _, t := range s.Spec.Tunings {
		if t.RPS == nil || t.RPS.CPUs == study.CPUsAll || t.RPS.CPUs == study.CPUsAllButSoftIRQ {
			continue
		}
		set, _ := cpuset.Parse(t.RPS.CPUs)
		for _, c := range set {
			if !p.steerCPUs().Contains(c) {
				return nil, &PreflightError{fmt.Errorf("tuning %s: rps cpus %s: CPU %d is not a CPU of the server node (%s)",
					t.Name, t.RPS.CPUs, c, p.steerCPUs())}
			}
		}
	}
	return p, nil
}

// steerCPUs are the CPUs an RPS mask may name: the server node's CPUs
// (the paper's "all cores" of the server VM), or every CPU when shared.
func (p *plan) steerCPUs() cpuset.Set {
	if len(p.serverCPUs) > 0 {
		return p.serverCPUs
	}
	return p.machine
}

func nodeCPUs(node, list string, machine cpuset.Set) (cpuset.Set, error) {
	if list == "" {
		return nil, nil
	}
	set, err := cpuset.Parse(list)
	if err != nil {
		return nil, fmt.Errorf("spec.nodes.%s.cpus: %w", node, err)
	}
	for _, c := range set {
		if !machine.Contains(c) {
			return nil, fmt.Errorf("spec.nodes.%s.cpus: CPU %d does not exist (this machine has %s)", node, c, machine)
		}
	}
	return set, nil
}

// runIDPrefix starts every run id; tests set "t" so their namespaces are
// "cnb-t<hex>-*", told apart from real runs'.
var runIDPrefix = ""

func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return runIDPrefix + hex.EncodeToString(b)
}

// Run executes the study and returns the run directory. The directory is
// returned also on failure when it holds partial results.
func Run(ctx context.Context, opt Options) (string, error) {
	s := opt.Study
	if opt.Progress == nil {
		opt.Progress = progress.New(os.Stderr)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	b, err := newBackend(opt)
	if err != nil {
		return "", &PreflightError{err}
	}
	p, err := preflight(ctx, b, s)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(opt.OutDir); err == nil {
		if ents, _ := os.ReadDir(opt.OutDir); len(ents) > 0 {
			return "", &PreflightError{fmt.Errorf("--out %s exists and is not empty; choose another directory", opt.OutDir)}
		}
	}

	r := &run{opt: opt, plan: p, study: s, id: newRunID(), backend: b}
	jdir := opt.JournalDir
	if jdir == "" {
		jdir = journal.DefaultDir
	}
	r.jdir = jdir
	r.journal, err = journal.Open(jdir, r.id, local.Prefix)
	if err != nil {
		return "", fmt.Errorf("open journal: %w", err)
	}
	restoreTmp, err := r.useTempDir()
	if err != nil {
		r.journal.Close()
		return "", err
	}
	w, err := results.Create(opt.OutDir)
	if err != nil {
		restoreTmp()
		r.journal.Close()
		return "", err
	}
	r.out = w
	err = r.execute(ctx)
	if terr := restoreTmp(); terr != nil && err == nil {
		err = terr
	}
	if cerr := r.journal.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("journal: %w", cerr)
	}
	if cerr := w.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if r.samples > 0 {
		if rerr := report.Build(opt.OutDir); rerr != nil && err == nil {
			err = fmt.Errorf("build report: %w", rerr)
		}
	}
	return opt.OutDir, err
}

type run struct {
	backend backend
	opt     Options
	plan    *plan
	study   *study.Study
	id      string
	journal *journal.Journal
	out     *results.Writer
	samples int
	// notes are added to env.json.
	notes []string
	// env is env.json as written, kept to add each datapath's facts.
	env results.Env
	// jdir is the journal directory (run state directories live below).
	jdir string
	// softirqCore remembers, per replica count, the core that took the
	// most NET_RX softirqs at baseline: the core rps-7 steers away from.
	softirqCore map[int]int
}

func (r *run) execute(ctx context.Context) error {
	s := r.study
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	if err := r.out.WriteStudy(b); err != nil {
		return err
	}
	total := len(s.Cells()) * s.Spec.Trials
	r.opt.Progress.Begin(total)
	defer r.opt.Progress.End()
	r.softirqCore = map[int]int{}
	for _, n := range r.plan.notes {
		r.notes = append(r.notes, n)
		r.opt.Progress.Logf("note: %s", n)
	}
	if _, ok := r.backend.(localBackend); ok {
		if note := checkIdle(r.opt.ProcRoot); note != "" {
			r.notes = append(r.notes, note)
			r.opt.Progress.Logf("warning: %s", note)
		}
	}
	envWritten := false
	for _, d := range s.Spec.Datapaths {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := r.backend.up(ctx, r, d)
		if err != nil {
			return fmt.Errorf("build cluster for %s: %w", d.Name, err)
		}
		if !envWritten {
			if err := r.writeEnv(c); err != nil {
				c.Close()
				return err
			}
			envWritten = true
		}
		de, err := r.backend.configure(ctx, r, c, d)
		if err == nil {
			err = r.recordDatapath(d.Name, de)
		}
		if err != nil {
			c.Close()
			return fmt.Errorf("datapath %s: %w", d.Name, err)
		}
		err = r.datapath(ctx, c, d)
		if cerr := c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("tear down %s: %w", d.Name, cerr)
		}
		if err != nil {
			return err
		}
		// Pods are deleted when scaling down and by Close, after the
		// trials, so their teardown latency is a fact of the datapath
		// (env.json), not of a trial's sample.
		if pt, ok := c.(podTimer); ok {
			de := r.env.Datapaths[d.Name]
			de.PodNetwork = podNetworkTimes(pt.PodTimes())
			if err := r.recordDatapath(d.Name, de); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) datapath(ctx context.Context, c engine.Cluster, sd study.Datapath) error {
	s, dp := r.study, sd.Name
	var pol *policyState
	if sd.Policy != "" {
		pol = &policyState{hooked: map[string]bool{}, env: r.env.Datapaths[dp].Policy}
	}
	for _, reps := range s.Spec.Replicas {
		need := reps
		for _, w := range s.Variants() {
			need = max(need, podsNeeded(w, reps))
		}
		servers, clients, err := c.Scale(ctx, need)
		if err != nil {
			return fmt.Errorf("%s: scale to %d pod pairs: %w", dp, need, err)
		}
		if pol != nil {
			if err := r.applyPolicy(ctx, c, sd, pol, servers, clients); err != nil {
				return fmt.Errorf("%s: %w", dp, err)
			}
			if err := r.recordDatapath(dp, r.env.Datapaths[dp]); err != nil {
				return err
			}
		}
		for trial := 1; trial <= s.Spec.Trials; trial++ {
			for _, w := range s.Variants() {
				pl, err := place(w, reps, servers, clients)
				if err != nil {
					return err
				}
				for _, t := range s.Spec.Tunings {
					cell := results.Cell{Datapath: dp, Tuning: t.Name, Workload: w.Name, Replicas: reps}
					if err := r.trial(ctx, c, cell, trial, t, w, pl); err != nil {
						return fmt.Errorf("%s/%s/%s/%d replicas, trial %d: %w", cell.Datapath, cell.Tuning, cell.Workload, reps, trial, err)
					}
					r.opt.Progress.Step(fmt.Sprintf("%s %s %s r=%d trial %d/%d", dp, w.Name, t.Name, reps, trial, s.Spec.Trials))
					if cd := s.Spec.Cooldown.Duration; cd > 0 {
						select {
						case <-ctx.Done():
							return ctx.Err()
						case <-time.After(cd):
						}
					}
				}
			}
		}
	}
	return nil
}

// useTempDir points TMPDIR, for the length of the run, at the run's own
// temporary directory (journal.TempDir), journaled before it is created.
// Why: the run's helpers keep files while they work (flanneld's and
// BIRD's configurations and sockets, perf's recordings, nginx's
// configuration) and remove them when they finish, but a run killed with
// SIGKILL cannot; `cnibench cleanup` removes a dead run's journaled
// temporary directory with everything in it. TMPDIR is the one channel
// all of them, and the programs they start, already read. The returned
// function restores TMPDIR and removes the directory.
func (r *run) useTempDir() (func() error, error) {
	tmp := journal.TempDir(os.TempDir(), r.id)
	if err := r.journal.RecordDir(tmp); err != nil {
		return nil, fmt.Errorf("journal temporary directory %s: %w", tmp, err)
	}
	// Mkdir, not MkdirAll: the run ID is new, so an existing directory is
	// another run's. 0755 (then chmod, past the umask) as nginx's workers,
	// which drop root, must reach their site below it.
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("temporary directory of run %s: %w", r.id, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("temporary directory of run %s: %w", r.id, err)
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", tmp)
	return func() error {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		if err := os.RemoveAll(tmp); err != nil {
			return fmt.Errorf("remove temporary directory: %w", err)
		}
		return r.journal.RemovedDir(tmp)
	}, nil
}
