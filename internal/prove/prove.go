// Package prove measures `cnibench advise` candidates: for each, an A/B
// run of the workload-shape study (the user's, or ab.yaml) with the
// rule's prove overrides, on the local engine's emulated nodes or (with
// --engine kube) on a cluster, through the runner (so every change is
// journaled and reverted, also after a kill and `cnibench cleanup`),
// with the adaptive, paired statistics of the run. The verdict is computed here from the run's own numbers;
// advise renders it.
package prove

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// DefaultStudy is the workload shape used without --study.
//
//go:embed ab.yaml
var DefaultStudy []byte

// Options configure the A/B runs.
type Options struct {
	// Resolve returns the workload-shape study with the overrides set
	// over it (study.Resolve or study.Parse with Options.Set).
	Resolve func(sets []string) (*study.Study, error)
	// Budget is each candidate's machine time (spec.budget of its A/B,
	// adaptive or fixed), one of BudgetShares equal shares of the
	// user's --budget.
	Budget       time.Duration
	BudgetShares int
	// OutDir holds one run directory per candidate: prove-RULE.
	OutDir     string
	JournalDir string
	Progress   progress.Reporter
	// Engine and Kube run the A/B on a cluster ("kube"), default local.
	Engine string
	Kube   *kube.Config
	// Study names the user's --study ("": the built-in A/B) and Sets are
	// the user's --set, applied before each candidate's own overrides.
	// The built-in A/B without a trials override gets the trial maximum
	// its budget affords (fitMax), so a larger --budget buys more trials.
	Study string
	Sets  []string
	// ClusterArgs are the cluster flags the user gave (--kubeconfig,
	// --server-node ...), in words, repeated in a rerun command.
	ClusterArgs []string
	// Shape says in words what Study is when it is not the user's
	// --study (a run's own study, narrowed to a finding's cells), for
	// the proof; "" otherwise.
	Shape string
	// Cleanup is the command a kept journal of an A/B run names
	// (runner.Options.Cleanup): cleanup --kube with the cluster's flags
	// for a kube A/B; empty: the journal directory's local cleanup.
	Cleanup string
	// MachineLocked: the caller holds the machine's lock
	// (runner.LockMachine) over all candidates (runner.Options).
	MachineLocked bool
}

// Unprovable says why a candidate gets no A/B here ("" when it does):
// the rule has none, or it compares datapaths, which a cluster's CNI
// fixes.
func Unprovable(opt Options, e *advise.Entry) string {
	switch {
	case !e.Rule.Provable():
		return e.Rule.NoProof
	case opt.Engine == "kube" && e.Rule.ProvesDatapaths():
		return "its A/B compares datapaths, and a cluster's datapath is its CNI: change the CNI's configuration on a test cluster and compare two runs (cnibench compare)"
	}
	return ""
}

// Plan resolves a candidate's A/B study without running it: bad input
// (a study the overrides make invalid) is found before anything runs.
func Plan(opt Options, e *advise.Entry, in *inspect.Inspection) (*study.Study, []string, error) {
	sets, err := e.Rule.ProveSets(in)
	if err != nil {
		return nil, nil, err
	}
	var shape []string
	if opt.Study == "" {
		// The rule's workload shape replaces the built-in one's; the
		// user's --set still comes after it, the candidate's A/B last.
		if shape, err = e.Rule.ShapeSets(in); err != nil {
			return nil, nil, err
		}
	}
	s, err := opt.Resolve(append(append(shape, opt.Sets...), sets...))
	if err != nil {
		return nil, nil, fmt.Errorf("candidate %s: %w", e.Name, err)
	}
	if _, _, err := sides(s, e.Rule.ProvesDatapaths()); err != nil {
		return nil, nil, fmt.Errorf("candidate %s: %w", e.Name, err)
	}
	sets = append(shape, sets...)
	s.Metadata.Name = "advise-" + e.Name
	// The budget caps a fixed design too (its cells stop when it is
	// spent): --set trials=20 with --set duration=30s would otherwise
	// run its 20 trials per cell whatever --budget said.
	if opt.Budget > 0 {
		s.Spec.Budget = study.Duration{Duration: opt.Budget}
		if s.Spec.Trials.Adaptive() && opt.Study == "" && !setsTrials(opt.Sets) {
			// Capped where a study's trials are (the A/B's study.yaml
			// must parse back: a resumed run and a rerun read it).
			s.Spec.Trials.Max = min(max(s.Spec.Trials.Max, fitMax(s, opt.Budget)), study.MaxTrials)
		}
	}
	return s, sets, nil
}

// fitMax is the trials per cell a budget affords at the study's trial
// length (set-up not counted, so the budget, not the maximum, ends a
// run that needs them all): with the built-in A/B's maximum of 10 a
// --budget of 30m would otherwise end undecided after a few minutes,
// its cells judged futile at 10. Plan caps it at study.MaxTrials.
func fitMax(s *study.Study, budget time.Duration) int {
	per := time.Duration(len(s.Cells())) * (s.Spec.Duration.Duration + s.Spec.Cooldown.Duration)
	if per <= 0 {
		return 0
	}
	return int(budget / per)
}

// setsTrials: the user's overrides set the trial count or range.
func setsTrials(sets []string) bool {
	for _, v := range sets {
		if k, _, _ := strings.Cut(v, "="); k == "trials" || strings.HasPrefix(k, "trials.") {
			return true
		}
	}
	return false
}

// sides names A and B: the first two datapath entries when the rule's
// A/B sets datapaths, else the first two tunings. By the rule, not by
// the study: a --study with several tunings (rps-rfs) under a datapath
// rule still compares the datapaths, tuning by tuning.
func sides(s *study.Study, datapaths bool) (a, b string, err error) {
	switch {
	case datapaths && len(s.Spec.Datapaths) >= 2:
		return s.Spec.Datapaths[0].Name, s.Spec.Datapaths[1].Name, nil
	case !datapaths && len(s.Spec.Tunings) >= 2:
		return s.Spec.Tunings[0].Name, s.Spec.Tunings[1].Name, nil
	case datapaths:
		return "", "", fmt.Errorf("the A/B compares datapaths and needs two, the study has %d", len(s.Spec.Datapaths))
	}
	return "", "", fmt.Errorf("the A/B compares tunings and needs two, the study has %d", len(s.Spec.Tunings))
}

// Candidate runs one candidate's A/B and fills its Proof, Measured and
// Verdict. A run that fails is recorded in the proof (and the entry says
// so); the error is returned for the caller to report.
func Candidate(ctx context.Context, opt Options, e *advise.Entry, in *inspect.Inspection) error {
	s, sets, err := Plan(opt, e, in)
	if err != nil {
		return err
	}
	a, b, _ := sides(s, e.Rule.ProvesDatapaths())
	dir := filepath.Join(opt.OutDir, "prove-"+e.Name)
	p := &advise.Proof{RunDir: dir, A: a, B: b, Sets: sets, Margin: s.Spec.DecisionMargin(), Shape: opt.Shape,
		Reverted: "every change of the run is journaled and reverted at its end (cnibench cleanup after a crash)"}
	e.Proof = p
	// Held as `cnibench run` holds its directory, so that a compare of
	// it while it is measured is refused rather than gating a partial
	// run; an empty directory made here goes if the run writes nothing.
	_, serr := os.Stat(dir)
	made := serr != nil && os.MkdirAll(dir, 0o755) == nil
	failed := func(err error) error {
		p.Error = err.Error()
		e.Measured, e.Verdict = "the A/B run failed: "+err.Error(), advise.Failed
		return fmt.Errorf("candidate %s: %w", e.Name, err)
	}
	unlock, err := runner.LockRunDir(dir)
	if err != nil {
		return failed(err)
	}
	defer releaseDir(unlock, p, made)
	_, err = runStudy(ctx, runner.Options{Study: s, OutDir: dir, JournalDir: opt.JournalDir, Progress: opt.Progress,
		Engine: opt.Engine, Kube: opt.Kube, Command: origin(opt, e.Name), BudgetShares: opt.BudgetShares,
		MachineLocked: opt.MachineLocked, Cleanup: opt.Cleanup})
	// A run that measured every cell and then left host changes (its
	// journal kept) has its verdict: it is given, with what was left,
	// and the error stops the candidates after it (advise --prove). One
	// that measured nothing (every cell given up) is read too: where A's
	// cells were given up as B's were, the verdict says so (not
	// measured), not that the candidate failed.
	var kept *journal.PendingError
	nothing := errors.Is(err, runner.ErrNothingMeasured) && ctx.Err() == nil
	if err != nil && !nothing && (!errors.As(err, &kept) || ctx.Err() != nil) {
		return failed(err)
	}
	leftErr := err
	run, err := results.Load(dir)
	if err != nil {
		switch {
		case nothing:
			return failed(leftErr)
		case kept != nil:
			return failed(errors.Join(leftErr, err))
		}
		return err
	}
	v, why := judgeRun(p, s, run, !e.Rule.ProvesDatapaths())
	if nothing {
		if v != advise.Unmeasured {
			return failed(leftErr)
		}
		p.Error = leftErr.Error()
	}
	e.Verdict, e.VerdictWhy = v, why
	e.Measured = measured(p)
	if nothing {
		return fmt.Errorf("candidate %s: %w", e.Name, leftErr)
	}
	if e.Verdict == advise.Undecided {
		p.Rerun = rerun(opt, e.Name, s, run.Stops)
	}
	if kept != nil {
		p.Error = leftErr.Error()
		e.Measured += " (its teardown left host changes: " + leftErr.Error() + ")"
		return fmt.Errorf("candidate %s: %w", e.Name, leftErr)
	}
	return nil
}

// judgeRun reads B against A (p.A, p.B: tunings, or datapaths) from the
// A/B's run into p, and judges its cells.
func judgeRun(p *advise.Proof, s *study.Study, run *results.Run, tunings bool) (v, why string) {
	m := analysis.Build(s, run.Samples)
	p.Metric, p.Cells = cells(s, m, run.Stops, p.A, p.B, tunings, analysis.CountedDisturbed(analysis.MarkedOf(run)))
	p.Also = also(s, m, p.B, tunings)
	p.Polling = polling(m, p.A, p.B, tunings)
	return verdict(p.Cells, p.Margin)
}

// releaseDir lets go of a candidate's A/B directory: its lock, and the
// directory itself where Candidate made it and the run wrote nothing. A
// run that failed before it recorded anything leaves no directory
// (runner.Run removes its files): the proof then names none.
func releaseDir(unlock func(), p *advise.Proof, made bool) {
	unlock()
	if made {
		_ = os.Remove(p.RunDir) // only if empty
	}
	if _, err := os.Stat(p.RunDir); errors.Is(err, os.ErrNotExist) {
		p.RunDir = ""
	}
}

// runStudy runs an A/B (runner.Run; tests replace it).
var runStudy = runner.Run

// rerun is the candidate's A/B alone with the trial maximum that decides
// the most of its undecided cells by their estimates at a cost near this
// A/B's (analysis.Rerun.Suggested), and a budget that covers it;
// nil when no cell has an estimate.
func rerun(opt Options, name string, s *study.Study, stops []results.Stop) *advise.ProofRerun {
	fixed := !s.Spec.Trials.Adaptive()
	// Only the replica counts and workloads the undecided cells need, as
	// a run's rerun does (analysis.RerunScope); A and B are the rule's
	// and both are always needed.
	sc, keep := analysis.RerunScope(stops, s), (func(results.Cell) bool)(nil)
	if !slices.ContainsFunc(sc.Sets, func(kv [2]string) bool { return !slices.Contains(shapeKeys, kv[0]) }) {
		keep = sc.Has
	}
	r, ok := analysis.RerunToDecide(stops, fixed, keep)
	if !ok {
		return nil
	}
	o := r.Suggested()
	args := aloneArgs(opt, name)
	if keep != nil {
		args = cmdline.Narrow(args, sc.Sets)
	}
	args = append(cmdline.WithSet(args, analysis.TrialsKey(fixed), strconv.Itoa(o.Max)), "--budget", study.ShortDuration(analysis.RerunBudget(o.Time)))
	return &advise.ProofRerun{Args: args, Cells: o.Cells, Undecided: r.Undecided, Seconds: o.Time.Seconds()}
}

// shapeKeys are the lists of an A/B's study that its rerun may narrow:
// not the datapaths or tunings that make its A and B. spec.only may pick
// cells too: A comes with B's cells as what they are compared with.
var shapeKeys = []string{"workloads", "replicas", "impairments", "only"}

// aloneArgs are the advise flags, after "advise --prove", that prove the
// candidate name alone as opt does: the rule, the cluster, the user's
// study and overrides.
func aloneArgs(opt Options, name string) []string {
	args := []string{"--rule", name}
	if opt.Engine == "kube" {
		args = append(append(args, "--engine", "kube"), opt.ClusterArgs...)
	}
	if opt.Study != "" {
		args = append(args, "--study", opt.Study)
	}
	for _, v := range opt.Sets {
		args = append(args, "--set", v)
	}
	return args
}

// origin is the command a candidate's A/B run records (env.json's
// origin): advise proving that candidate alone with its share of the
// budget, which is what a rerun of the run directory (its report's rerun
// command, with a larger trial maximum appended) takes.
func origin(opt Options, name string) []string {
	words := append([]string{"cnibench", "advise", "--prove"}, aloneArgs(opt, name)...)
	if opt.Budget > 0 {
		words = append(words, "--budget", study.ShortDuration(opt.Budget))
	}
	return words
}

// isHeadline: the comparisons are of the normalized metrics (bitrate).
func isHeadline(metric string) bool { return slices.Contains(analysis.NormalizedMetrics, metric) }

func fin(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
