package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/engine/kube"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/prove"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/seen"
	"github.com/cnibench/cnibench/internal/study"
)

type adviseFlags struct {
	out        string
	rules      []string
	prove      bool
	engine     string
	study      string
	fromRun    string
	noInspect  bool
	sets       []string
	budget     time.Duration
	journalDir string
	kube       kubeFlags
}

func newAdviseCmd() *cobra.Command {
	var f adviseFlags
	cmd := &cobra.Command{
		Use:   "advise",
		Short: "Inspect this machine, propose the knobs that may speed up its pod network, and prove them",
		Long: `advise reads, and only reads, what decides how fast this node's pod network can be:
CPUs and NUMA nodes, NIC queues, RSS, IRQ affinity, RPS/RFS, offloads (GRO, tunnel
segmentation), the MTU of underlay, tunnel and pod devices, the CNI, netfilter and
conntrack sizes, qdiscs, busy polling and the kernel. Its rules (one file each, with the
study or kernel documentation they cite) turn that into candidate knobs, each with its
predicted effect, risk and how to make it permanent. The pages (advice.md, advice.html,
advice.json, inspection.json) go to --out and the Markdown to stdout.

With --prove, each candidate is measured: an A/B run of a short workload (or --study's)
on emulated nodes of this machine (root), or with --engine kube on the cluster's nodes
(no local root), the node as found (A) against the candidate (B), with adaptive, paired statistics; accepted only when B is better by more
than the margin, shown rejected with its interval otherwise. Every change is reverted at
the end of each run. The permanent forms are printed for review, never applied.`,
		Example: "  sudo cnibench advise\n  sudo cnibench advise --rule rfs --rule tunnel-mtu --out /tmp/advice\n" +
			"  sudo cnibench advise --prove --budget 10m\n  sudo cnibench advise --prove --study ./my-study.yaml\n" +
			"  sudo cnibench advise --prove --rule rfs --set trials.max=20 --budget 10m\n  cnibench advise --run results/A --no-inspect",
		Args: cobra.NoArgs,
		RunE: f.run,
	}
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "directory for the pages (default ./results/advise-TIMESTAMP)")
	cmd.Flags().StringArrayVar(&f.rules, "rule", nil, "evaluate only this rule (repeatable; default every rule)")
	cmd.Flags().BoolVar(&f.prove, "prove", false, "measure each candidate with an A/B run on emulated nodes (root) or, with --engine kube, on the cluster (reverted)")
	cmd.Flags().StringVar(&f.study, "study", "", "with --prove: the workload shape of the A/B (a built-in study or a file; default a short iperf3 TCP A/B)")
	_ = cmd.MarkFlagFilename("study")
	cmd.Flags().StringVar(&f.fromRun, "run", "", "a run directory whose findings (cells bound by one core, RPS/RFS against the baseline, netfilter's share of the CPU cost per packet, overlays against native routing, round trips on cores slow to wake) are set beside the candidates that answer them; with --prove those candidates are measured on the run's own cells")
	_ = cmd.MarkFlagDirname("run")
	cmd.Flags().BoolVar(&f.noInspect, "no-inspect", false, "with --run: inspect nothing, and advise from the machine the run recorded in its env.json (kernel, CPUs, how they idle, the sysctls its tunings set) instead of this one, where it ran or on any machine, without root; the rules that read what env.json does not record (devices, netfilter, conntrack) are left out, saying so")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "with --prove: override a field of the A/B's study, before each candidate's own (repeatable; e.g. trials.max=20, replicas=[1,4,16])")
	durationVar(cmd.Flags(), &f.budget, "budget", 5*time.Minute, "with --prove: machine time of all the A/B runs together, split over the candidates")
	cmd.Flags().StringVar(&f.engine, "engine", "local", "what to inspect: local (this machine) or kube (the server node of a cluster, through the installed agent; --prove runs the A/B there)")
	f.kube.register(cmd.Flags())
	cmd.Flags().StringVar(&f.journalDir, "journal-dir", "", "where host changes are journaled for crash recovery (default /run/cnibench)")
	_ = cmd.Flags().MarkHidden("journal-dir")
	return cmd
}

// check refuses bad input before anything is read or changed.
func (f *adviseFlags) check(cmd *cobra.Command) error {
	if err := f.checkNoInspect(cmd); err != nil {
		return inputErr(err)
	}
	switch f.engine {
	case "local":
		if err := f.kube.refuseWithout(cmd.Flags(), "--engine kube"); err != nil {
			return err
		}
	case "kube":
		if err := refuseInstallOnly(cmd.Flags(), "advise --engine kube"); err != nil {
			return err
		}
		if err := f.kube.config().Validate(); err != nil {
			return inputErr(err)
		}
		// Before the cluster's inspection: --prove's A/Bs journal there.
		if err := refuseLocalJournalDir(f.journalDir); err != nil {
			return inputErr(err)
		}
	default:
		return inputErr(fmt.Errorf("unknown engine %q (local, kube)", f.engine))
	}
	if !f.prove {
		for _, name := range []string{"study", "set", "budget"} {
			if cmd.Flags().Changed(name) {
				return inputErr(fmt.Errorf("--%s needs --prove", name))
			}
		}
	}
	if f.budget <= 0 || f.budget > study.MaxBudget {
		// A share above the study's bound would write a study.yaml that
		// does not parse back (its budget out of range).
		return inputErr(fmt.Errorf("--budget %s: want a positive duration such as 5m, at most %s", flagText(cmd.Flags(), "budget"), shortDuration(study.MaxBudget)))
	}
	// With --run and no --study the sets may be for the run's own study
	// (the A/Bs of the candidates that answer its findings): proveAll
	// checks them once the run is read.
	if f.study != "" || len(f.sets) > 0 && f.fromRun == "" {
		if _, err := f.resolver()(f.sets); err != nil {
			return inputErr(err)
		}
	}
	return inputErr(checkAdviseOut(f.out, f.prove))
}

// checkAdviseOut refuses an --out the pages cannot go to (a file, which
// failed only when they were written, after the inspection, exit 1)
// and, with --prove, one that holds an earlier A/B run in a prove-RULE
// directory: each candidate's run refused its directory (a run's --out
// must be new, and advise has no --resume), after the inspection and
// with the machine's lock taken, and the advice said every candidate
// failed, exit 0. An empty prove-RULE directory is as good as none.
func checkAdviseOut(out string, prove bool) error {
	if out == "" {
		return nil
	}
	st, err := os.Stat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // the pages make it
	case err != nil:
		return fmt.Errorf("--out %s: %w", out, err)
	case !st.IsDir():
		return fmt.Errorf("--out %s exists and is not a directory; choose another --out", out)
	case !prove:
		return nil
	}
	runs, _ := filepath.Glob(filepath.Join(out, "prove-*"))
	for _, r := range runs {
		ents, err := os.ReadDir(r)
		if err != nil {
			return fmt.Errorf("--out %s: %s is not a directory an A/B run can go to (%w); choose another --out", out, filepath.Base(r), err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("--out %s: %s/ holds an earlier A/B; choose another --out", out, filepath.Base(r))
		}
	}
	return nil
}

func (f *adviseFlags) run(cmd *cobra.Command, _ []string) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	rules, err := advise.Rules()
	if len(f.rules) > 0 {
		rules, err = advise.Lookup(f.rules...)
	}
	if err != nil {
		return inputErr(err)
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", "advise-"+time.Now().Format("20060102-150405"))
	}
	// A bad run directory is bad input, found before the inspection.
	var fr fromRun
	if f.fromRun != "" {
		engine := f.engine
		if f.noInspect {
			engine = "" // nothing inspected: a run of either engine is read
		}
		if fr, err = readRun(f.fromRun, engine); err != nil {
			return err
		}
	}
	var in *inspect.Inspection
	if f.noInspect {
		in = inspect.FromEnv(fr.dir, fr.run.Env, fr.run.HasEnv)
	} else if in, err = f.inspect(cmd); err != nil {
		return err
	}
	if n := rootNote(os.Geteuid(), f); n != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), n)
	}
	rep := advise.Build(rules, in, time.Now())
	if fr.run != nil {
		rep.AddSightings(fr.dir, seen.Find(fr.dir, fr.run, fr.study))
		rep.Partial = append(rep.Partial, fr.notes()...)
	}
	if f.prove {
		if err := f.proveAll(cmd, rep, out, fr); err != nil {
			return proveStopped(cmd.Context(), cmd, rep, out, err)
		}
	}
	return writeAdvice(cmd, rep, out)
}

// proveStopped is the end of an advise --prove whose A/Bs stopped with
// err: where one left host changes, or the user stopped advise (ctx
// cancelled: Ctrl-C), the report is written all the same (the
// inspection and the verdicts of the A/Bs before stand, hours of runs
// maybe; the candidates not proved say why) and the exit says what
// stopped it (3, 130); any other stop (bad input found before the first
// A/B) writes nothing. A stopped advise's --out holds the A/B it
// stopped, so a new advise --prove needs another --out.
func proveStopped(ctx context.Context, cmd *cobra.Command, rep *advise.Report, out string, err error) error {
	var kept *journal.PendingError
	stopped := ctx != nil && ctx.Err() != nil
	if !errors.As(err, &kept) && !stopped {
		return err
	}
	if stopped {
		for i := range rep.Candidates {
			if e := &rep.Candidates[i]; e.Verdict == advise.NotProven {
				e.Measured, e.Verdict = "not measured: advise was stopped before its A/B", advise.Stopped
			}
		}
	}
	return errors.Join(err, writeAdvice(cmd, rep, out))
}

// writeAdvice writes the report's pages to out and its Markdown to
// standard output.
func writeAdvice(cmd *cobra.Command, rep *advise.Report, out string) error {
	if err := rep.WriteDir(out); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(cmd.OutOrStdout()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", filepath.Join(out, advise.FileHTML))
	return nil
}

// inspect reads this machine, or the cluster's server node through its
// agent.
func (f *adviseFlags) inspect(cmd *cobra.Command) (*inspect.Inspection, error) {
	if f.engine == "kube" {
		quietKlog()
		in, _, err := kube.InspectServer(cmd.Context(), *f.kube.config())
		// An --image the agent does not run would be refused by
		// --prove's runs too: bad input, as there.
		if errors.Is(err, kube.ErrUnreachable) || errors.Is(err, kube.ErrImageMismatch) {
			return nil, inputErr(err)
		}
		return in, err
	}
	in := inspect.Inspect(cmd.Context(), inspect.Host())
	in.Source = "this machine"
	if h, err := os.Hostname(); err == nil {
		in.Source += " (" + h + ")"
	}
	return in, nil
}

// proveAll measures every provable candidate, one A/B run each, after
// checking all of them: a bad --study fails before anything runs. A
// candidate that answers a finding of --run's run is measured on that
// run's cells (fromRun.options).
func (f *adviseFlags) proveAll(cmd *cobra.Command, rep *advise.Report, out string, fr fromRun) error {
	opt := prove.Options{Resolve: f.resolver(), OutDir: out, JournalDir: f.journalDir, Progress: progress.New(cmd.ErrOrStderr()),
		Study: absFile(cmd.Flags().Lookup("study")), Sets: f.sets}
	if f.engine == "kube" {
		opt.Engine, opt.Kube, opt.ClusterArgs = "kube", f.kube.config(), f.kube.given(cmd.Flags())
		opt.JournalDir = f.journalDir
		if opt.JournalDir == "" {
			var err error
			if opt.JournalDir, err = kubeJournalDir(); err != nil {
				return inputErr(err)
			}
		}
	}
	if err := f.checkSets(opt, fr); err != nil {
		return inputErr(err)
	}
	var todo []int
	opts := make([]prove.Options, len(rep.Candidates))
	for i := range rep.Candidates {
		e := &rep.Candidates[i]
		opts[i] = opt
		if f.study == "" {
			opts[i] = fr.options(opt, e)
		}
		if why := prove.Unprovable(opts[i], e); why != "" {
			e.Measured, e.Verdict = "not measured: "+why, advise.NotProvable
			continue
		}
		// The sets fit the run's study or the built-in A/B (checkSets),
		// not necessarily this candidate's.
		if _, err := opts[i].Resolve(f.sets); err != nil {
			e.Measured, e.Verdict = "not measured: the --set given does not apply to its A/B's study ("+cmp.Or(opts[i].Shape, "the built-in A/B")+"): "+err.Error(), advise.NotProvable
			continue
		}
		// A candidate whose A/B cannot be built here (an MTU the
		// emulated tunnel cannot carry) is not measured; the others are.
		if _, _, err := prove.Plan(opts[i], e, rep.Inspection); err != nil {
			e.Measured, e.Verdict = "not measured: its A/B cannot be built here: "+err.Error(), advise.NotProvable
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	jdir := cmp.Or(opt.JournalDir, journal.DefaultDir)
	// The machine's lock over all candidates, not per A/B run: another
	// run starting between two candidates would fail the next one.
	claim := proveRun(opt, cmd.Flags())
	lock, err := beginRun(&claim, jdir)
	if err != nil {
		return inputErr(err)
	}
	defer lock.Release()
	noteJournalDir(cmd.Context(), jdir)
	noteCleanup(cmd.Context(), claim.Cleanup, claim.Engine == "kube")
	for _, i := range todo {
		opts[i].MachineLocked, opts[i].Cleanup = claim.MachineLocked, claim.Cleanup
		opts[i].Budget, opts[i].BudgetShares = f.budget/time.Duration(len(todo)), len(todo)
	}
	return proveEach(cmd.Context(), cmd.ErrOrStderr(), rep, todo, opts, prove.Candidate)
}

// proveEach runs the A/B of each candidate in todo, in turn. A failed
// A/B is a warning and the next goes on, but not one whose teardown left
// changes on the host (a journal kept, *journal.PendingError): no stale
// journal check stands between two candidates (the machine's lock is
// held over all), so the next A/B would measure a host that is not as
// found, its A not the node's. That error is returned at once, naming
// the candidates not proved, and exits 3 as any run's does. A stop by
// the user (ctx cancelled) returns at once too, the candidate it stopped
// marked so (proveStopped marks those after it).
func proveEach(ctx context.Context, stderr io.Writer, rep *advise.Report, todo []int, opts []prove.Options,
	candidate func(context.Context, prove.Options, *advise.Entry, *inspect.Inspection) error) error {
	for k, i := range todo {
		e := &rep.Candidates[i]
		fmt.Fprintf(stderr, "proving %s: A/B run in %s\n", e.Name, filepath.Join(opts[i].OutDir, "prove-"+e.Name))
		err := candidate(ctx, opts[i], e, rep.Inspection)
		var kept *journal.PendingError
		switch {
		case err == nil:
		case ctx.Err() != nil:
			// The rest are marked by proveStopped, which writes the pages.
			e.Measured, e.Verdict = "not measured: advise was stopped during its A/B (what it measured so far is in "+
				filepath.Join(opts[i].OutDir, "prove-"+e.Name)+")", advise.Stopped
			return err
		case errors.As(err, &kept):
			return leftChanges(err, rep, e.Name, todo[k+1:])
		default:
			fmt.Fprintf(stderr, "warning: %v\n", err)
		}
	}
	return nil
}

// leftChanges is candidate name's error that left changes on the host,
// with the candidates that were not proved for it, each of which the
// report says so of.
func leftChanges(err error, rep *advise.Report, name string, rest []int) error {
	if len(rest) == 0 {
		return err
	}
	names := make([]string, len(rest))
	for k, i := range rest {
		e := &rep.Candidates[i]
		names[k] = e.Name
		e.Measured, e.Verdict = "not measured: the A/B of "+name+" before it left host changes unreverted (cnibench cleanup puts them back; then prove it again)", advise.NotProvable
	}
	return fmt.Errorf("%w; not proved, as their A/B would measure a host that is not as found: %s", err, strings.Join(names, ", "))
}

// checkSets: the user's own study and overrides must be good on their
// own, which is bad input otherwise. With --run and no --study, --set
// may be for the run's study (its findings' candidates are measured on
// it) or for the built-in A/B (the others): it must fit one of them.
func (f *adviseFlags) checkSets(opt prove.Options, fr fromRun) error {
	_, err := opt.Resolve(f.sets)
	if err == nil || f.study != "" || fr.study == nil {
		return err
	}
	file := filepath.Join(fr.dir, results.StudyFile)
	if _, rerr := study.Resolve(file, study.Options{Set: f.sets, Stored: true}, studyCatalog()); rerr != nil {
		return fmt.Errorf("--set fits neither the run's study: %w; nor the built-in A/B: %w", rerr, err)
	}
	return nil
}

// resolver resolves the A/B's workload shape with overrides (the user's
// --set, then a candidate's): --study, or the built-in short A/B.
func (f *adviseFlags) resolver() func([]string) (*study.Study, error) {
	return func(sets []string) (*study.Study, error) {
		if f.study != "" {
			// advise --run's A/B reruns name the run's study.yaml.
			return study.Resolve(f.study, study.Options{Set: sets, Stored: runStudyFile(f.study)}, studyCatalog())
		}
		return study.Parse("advise-ab (built in)", prove.DefaultStudy, study.Options{Set: sets}, studyCatalog())
	}
}
