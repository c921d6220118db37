// Package runner executes a study on an engine (the local one of network
// namespaces, or a Kubernetes cluster: engines.go): it checks every
// prerequisite before touching the host, builds the cluster per
// datapath, runs each cell's trials with its tuning applied and reverted,
// stores every trial as it ends, and builds the report.
//
// Order of work: trial k of every tuning runs before trial k+1 of any, so
// slow drift of a shared machine spreads evenly over the configurations
// instead of biasing the one that ran last. With one datapath, its pods
// are built once per replica count; with several, the datapaths share
// rounds too, each datapath's cluster built for its trials of the round
// (interleave.go).
package runner

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
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
	// Cleanup is the command that undoes what a kept journal leaves, as
	// its error prints it; empty: journal.DefaultCleanup.
	Cleanup string
	// Resume continues the interrupted run in OutDir (--resume): its
	// counted trials stay, the rest run and are appended (resume.go; its checks, resumecheck.go).
	Resume bool
	// Command is the command line that started the run, in words
	// (env.json's origin; a resumed run keeps the first run's).
	Command []string
	// BudgetShares is how many runs share the --budget whose share this
	// run's budget is (advise --prove splits its over the candidates),
	// so that the advice to raise it names the whole; 0 or 1: its own.
	BudgetShares int
	// MachineLocked says the caller holds the machine's lock (LockMachine)
	// across several runs, so Run does not take it again: advise --prove
	// holds it over all its candidates' A/B runs, or another run could
	// start between two of them (and the next candidate would fail).
	MachineLocked bool
}

// checkOutDir checks the output directory before anything runs: for
// --resume, the interrupted run's study and build (previousRun, whose
// run and study sum it returns), else that the directory is new.
func checkOutDir(opt Options, engine string) (*results.Run, string, error) {
	if !opt.Resume {
		return nil, "", CheckOut(opt.OutDir)
	}
	prev, sum, err := previousRun(opt, engine)
	if err != nil {
		return nil, "", &PreflightError{err}
	}
	return prev, sum, nil
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
// returned also on failure when it holds partial results; a new run that
// failed before it recorded anything leaves no directory of its own
// (Writer.DiscardUnrecorded) and returns "".
func Run(ctx context.Context, opt Options) (string, error) {
	s := opt.Study
	if opt.Progress == nil {
		opt.Progress = progress.New(os.Stderr)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	e, err := newEngine(opt)
	if err != nil {
		return "", &PreflightError{err}
	}
	if !opt.MachineLocked {
		// Before preflight, whose probes load modules: a second run
		// on this machine is refused having done nothing.
		l, err := LockMachine(opt)
		if err != nil {
			return "", err
		}
		defer l.Release()
	}
	// Before preflight's probes: a changed study or another build is
	// refused having changed nothing.
	prev, prevSum, err := checkOutDir(opt, e.Name())
	if err != nil {
		return "", err
	}
	p, err := resumePreflight(ctx, e, s, prev)
	if err != nil {
		return "", err
	}
	r := &run{opt: opt, plan: p, study: s, id: newRunID(), engine: e, began: time.Now(),
		design: newDesign(s), done: map[trialKey]bool{}, studySum: prevSum}
	if opt.Command != nil {
		r.origin = &results.Origin{Command: opt.Command, Profiles: slices.Sorted(maps.Keys(s.Profiles))}
	}
	if prev != nil {
		if err := r.loadPrevious(prev); err != nil {
			return "", &PreflightError{err}
		}
	}
	jdir := opt.JournalDir
	if jdir == "" {
		jdir = journal.DefaultDir
	}
	r.jdir = jdir
	r.journal, err = journal.Open(jdir, r.id, local.Prefix)
	if err != nil {
		return "", fmt.Errorf("open journal: %w", err)
	}
	r.journal.SetCleanup(journalCleanup(opt.Cleanup, jdir))
	restoreTmp, err := r.useTempDir()
	if err != nil {
		r.journal.Close()
		return "", err
	}
	open := results.Create
	if opt.Resume {
		open = results.Reopen
	}
	w, err := open(opt.OutDir)
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
	err = closeJournal(r.journal, err)
	return closeOut(w, opt.Resume, r.samples > 0, err)
}

// closeJournal closes the run's journal and adds its error to err: a
// journal kept because changes are left (*journal.PendingError) must
// reach the command line whatever else failed, or stopped the run, as it
// decides the exit code (3: run cnibench cleanup) and says what to do.
func closeJournal(j *journal.Journal, err error) error {
	cerr := j.Close()
	switch {
	case cerr == nil:
		return err
	case err == nil:
		return fmt.Errorf("journal: %w", cerr)
	}
	return fmt.Errorf("%w; journal: %w", err, cerr)
}

// journalCleanup is the command a kept journal in jdir names: the
// caller's (a kube run's cleanup --kube with its cluster), else jdir's
// local cleanup, with --journal-dir where it is not the default; plain
// `cnibench cleanup` did not replay a journal kept elsewhere.
func journalCleanup(given, jdir string) string {
	return cmp.Or(given, journal.CleanupFor(jdir))
}

type run struct {
	engine  engine.Engine
	opt     Options
	plan    *plan
	study   *study.Study
	id      string
	journal *journal.Journal
	out     *results.Writer
	samples int
	// notes are added to env.json.
	notes []string
	// env is env.json as written, kept to add each datapath's facts;
	// origin how the run was started (a resumed run: the first run's);
	// priorTunings what the interrupted run's tunings set (recordTuning),
	// priorImpairments what its impairments installed (recordImpairment),
	// priorNotes and priorDatapaths its notes and datapaths' facts
	// (writeEnv starts from them).
	env              results.Env
	origin           *results.Origin
	priorTunings     map[string][]results.TuningSetting
	priorImpairments map[string][]results.ImpairmentSetting
	priorNotes       []string
	priorDatapaths   map[string]results.DatapathEnv
	// logged are the notes onceInNotes has logged in this process.
	logged map[string]bool
	// jdir is the journal directory (run state directories live below).
	jdir string
	// softirqCore remembers, per end and replica count, the core that
	// took the most NET_RX softirqs at baseline: the core rps-7 steers
	// away from (noteSoftIRQCore; a resumed run's from its samples).
	softirqCore map[softirqKey]int

	// The repetition design and what it has seen (rounds.go).
	design design
	logs   map[results.Cell]*cellLog
	// done are the trials already counted (a resumed run's), or given up.
	done map[trialKey]bool
	// prev is what the interrupted run recorded of each trial, until the
	// resumed run replays it; oldStops its stops.json (resume.go).
	prev     map[trialKey]*priorTrial
	oldStops map[results.Cell]results.Stop
	// again holds where a trial the noise guard found disturbed goes on
	// when runJobs runs it again at the end of its round (attempts.go).
	again map[trialKey]attemptsSoFar
	// attemptsRun counts the attempts this process started, and meter
	// measures the machine before a disturbed trial's repeat (quiet.go;
	// nil: machineMeter, or a cluster's nodesMeter; tests give a fake).
	attemptsRun int
	meter       quietMeter
	// unitRun runs a cell's trial where the run's rounds would call
	// runUnit (nil: runUnit; tests give a fake, runTrial).
	unitRun func(ctx context.Context, c engine.Cluster, u unit, round int, tgt *knob.Target) error
	// stops are stops.json's entries so far.
	stops []results.Stop
	// part is the part of the run this process measures (results.Sample.Part:
	// 0, or past the interrupted run's for a resumed one, restore).
	part int
	// began is when this process started the run; prior is the machine
	// time of the interrupted run it resumes, as far as replayed.
	began      time.Time
	prior      time.Duration
	blocksDone int
	overhead   time.Duration
	trialsRun  int
	lastPause  time.Duration
	lastCPU    []results.CPUPoint
	// podTimes are each datapath's pods over its clusters (interleave.go
	// builds one per round).
	podTimes map[string][]engine.PodTime
	// clusters counts the clusters built; firstOn is, per cell, the
	// cluster and trial of its first trial on that cluster's pods
	// (freshPods).
	clusters int
	firstOn  map[results.Cell]firstTrial
	// minCheck is the check of the budget against the study's minimum
	// (budgetcheck.go).
	minCheck minimumCheck
	// resumed says what a resumed run kept of the interrupted one.
	resumed string
	// studySum is study.yaml's SHA-256 (env.json's study_sha256).
	studySum string
	// prevEnv is a resumed cluster run's earlier env.json, whose server
	// node the cluster's must match (sameNode); nil otherwise.
	prevEnv *results.Env
	// keptEnv is a resumed run's env.json as the interrupted run left
	// it, with this part's run ID added to run_ids (recordPart writes
	// it so before anything is made), put back when this run is refused
	// after its first cluster wrote its own (putBackEnv); nil when not
	// resumed.
	keptEnv *results.Env
	// runIDs are a resumed run's parts' run IDs, this one's last
	// (env.json's run_ids); nil for a new run, whose only one is id.
	runIDs []string
	// imageIDs are the images this process's clusters' nodes resolved
	// the workload pods' image to (recordImages), apart from the
	// interrupted run's in env.json's image_ids.
	imageIDs []string
}

func (r *run) execute(ctx context.Context) error {
	s := r.study
	if !r.opt.Resume {
		b, err := s.Marshal()
		if err != nil {
			return err
		}
		if err := r.out.WriteStudy(b); err != nil {
			return err
		}
		r.studySum = studySum(b)
	} else if err := r.recordPart(); err != nil {
		return err
	}
	// A resumed run counts what is left: its kept trials are not run
	// again, nor those of cells it stopped (it said "running up to 6
	// trials" and ran none of a finished run's).
	r.opt.Progress.Begin(r.trialsLeft(), r.budgetEnd())
	defer r.opt.Progress.End()
	if r.opt.Resume {
		r.opt.Progress.Logf("%s", r.resumed)
	}
	r.opt.Progress.Logf("repetitions: %s", r.describe())
	r.checkBudgetAtStart()
	for _, n := range r.plan.notes {
		r.notes = append(r.notes, n)
		r.opt.Progress.Logf("note: %s", n)
	}
	for _, n := range r.plan.warnings {
		r.notes = append(r.notes, n)
		r.opt.Progress.Logf("warning: %s", n)
	}
	if len(s.Spec.Datapaths) > 1 {
		if err := r.interleaved(ctx); err != nil {
			return err
		}
		return r.resumedUnbuilt()
	}
	for _, d := range s.Spec.Datapaths {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.finishedBefore(d.Name) {
			// As a round of shared rounds the interrupted run measured
			// (roundOn): replayed, with no cluster built for it.
			if err := r.replayDatapath(d.Name); err != nil {
				return err
			}
			continue
		}
		// The study's one datapath (several run in shared rounds): a
		// cluster that cannot be set up ends the run (upDatapath with
		// no lost), its cells left to a --resume, as giving them up
		// would give up every cell of the run for good.
		work := func(c engine.Cluster, tgt *knob.Target) error { return r.datapath(ctx, c, tgt) }
		if err := r.upDatapath(ctx, d, work, nil); err != nil {
			return err
		}
	}
	return r.resumedUnbuilt()
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
	// On failure the entry is closed: a directory Mkdir did not make is
	// not ours to remove, and a pending entry would block later runs.
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("temporary directory of run %s: %w", r.id, err), r.journal.RemovedDir(tmp))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("temporary directory of run %s: %w", r.id, err), os.Remove(tmp), r.journal.RemovedDir(tmp))
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
