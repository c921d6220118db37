package app

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

type runFlags struct {
	studyFlags
	out        string
	engine     string
	journalDir string
	kube       kubeFlags
	resume     string
	budget     time.Duration
	dryRun     bool
}

// study is the study to run: the named one with the flags applied, or,
// with --resume, the resolved study the interrupted run recorded.
func (f *runFlags) study(cmd *cobra.Command, args []string) (*study.Study, error) {
	if f.resume == "" {
		if len(args) != 1 {
			return nil, inputErr(fmt.Errorf("run needs a STUDY (a built-in name or a file), or --resume DIR"))
		}
		s, err := f.load(cmd.ErrOrStderr(), args[0])
		if err != nil {
			return nil, err
		}
		return s, f.applyBudget(cmd, s)
	}
	for _, name := range []string{"quick", "profile", "set", "out", "budget"} {
		if cmd.Flags().Changed(name) {
			return nil, inputErr(fmt.Errorf("--resume %s continues the recorded study as it was; --%s cannot change it", f.resume, name))
		}
	}
	if len(args) > 0 {
		return nil, inputErr(fmt.Errorf("--resume %s continues the recorded study; do not name a study (%s) too", f.resume, args[0]))
	}
	if err := checkRunDir(f.resume); err != nil {
		return nil, inputErr(fmt.Errorf("--resume %w", err))
	}
	if err := checkResumeEngine(f.resume, f.engine); err != nil {
		return nil, inputErr(err)
	}
	f.out = f.resume
	return f.loadFile(filepath.Join(f.resume, results.StudyFile))
}

// applyBudget puts --budget into the study, so study.yaml records it and
// a resumed run keeps it.
func (f *runFlags) applyBudget(cmd *cobra.Command, s *study.Study) error {
	if !cmd.Flags().Changed("budget") {
		return nil
	}
	// The flag replaces spec.budget after validation: the same bound.
	if f.budget <= 0 || f.budget > study.MaxBudget {
		return inputErr(fmt.Errorf("--budget %s: want a positive duration such as 30m or 2h, at most %s", flagText(cmd.Flags(), "budget"), shortDuration(study.MaxBudget)))
	}
	s.Spec.Budget = study.Duration{Duration: f.budget}
	return nil
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run STUDY",
		Short: "Run a study end to end and write its report",
		Long: `Run a built-in study (see 'cnibench studies') or a study file. The local engine
builds two nodes and their pods as network namespaces on this machine (root needed);
with --engine kube they are a cluster's (no root needed here). A run applies each
tuning to the server node, the client node or both (its side: server, the default;
client; both), runs the workload, reverts every change, and writes a run directory
with raw samples, summary.csv, summary.json, summary.md and report.html.`,
		Example: "  sudo cnibench run rps-rfs --quick\n" +
			"  sudo cnibench run rps-rfs --set replicas=[1,16] --set trials=5 --out /tmp/rps\n" +
			"  sudo cnibench run ./my-study.yaml\n" +
			"  sudo cnibench run rps-rfs --budget 2h\n" +
			"  sudo cnibench run ./my-study.yaml --dry-run\n" +
			"  sudo cnibench run --resume results/rps-rfs-20261123-101500\n" +
			"  cnibench run rps-rfs --quick --engine kube --server-node worker-1 --client-node worker-2",
		Args: cobra.MaximumNArgs(1),
		RunE: f.run,
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "run directory (default ./results/STUDY-TIMESTAMP)")
	cmd.Flags().StringVar(&f.engine, "engine", "local", "where nodes and pods come from: local (network namespaces on this machine) or kube (a real cluster, see --kubeconfig)")
	f.kube.register(cmd.Flags())
	cmd.Flags().StringVar(&f.journalDir, "journal-dir", "", "where host changes are journaled for crash recovery (default /run/cnibench)")
	_ = cmd.Flags().MarkHidden("journal-dir")
	cmd.Flags().StringVar(&f.resume, "resume", "", "continue the interrupted run in this directory: its trials are kept, the missing ones run (after 'cnibench cleanup', 'cnibench cleanup --kube' for a kube run)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "check the study and this machine (or cluster), say what the run would do and for how long, and change nothing")
	durationVar(cmd.Flags(), &f.budget, "budget", 0, "machine time the run may spend (e.g. 30m, 2h): with trials {min, max} the adaptive runner spends it where intervals shrink most; a fixed count stops where it runs out")
	return cmd
}

// printOutcome prints what a finished run found beyond its report's
// path: the decisions, and the cells bound by one core.
func printOutcome(w io.Writer, run *results.Run, s *study.Study) {
	dir := run.Dir
	unfinished := analysis.Unfinished(s, run)
	printDecisions(w, run, s, unfinished)
	if l := report.UnfinishedLine(unfinished, s, dir); l != "" {
		fmt.Fprintln(w, "warning: "+l)
	}
	// Cells bound by one core (analysis.OneCore): a reader of the
	// decisions alone would take their numbers for the machine's limit.
	cells := analysis.OneCoreCells(run.Samples, run.CPU, run.Env.MachineCPUs)
	if l := report.OneCoreLine(cells); l != "" {
		fmt.Fprintln(w, l)
	}
	if c := report.SteerCommand(cells, s, run.Env.Origin); c != "" {
		fmt.Fprintln(w, report.SteerLine)
		fmt.Fprintln(w, "  "+c)
	}
	// Cells whose trials spread far more than their neighbours'
	// (analysis.Row.Wide): an undecided one is often two values. UDP
	// cells whose senders fell behind the offered rate: the run warned
	// as it happened; this names them.
	rows := analysis.Summarize(s, run.Samples)
	if l := report.WideLine(rows); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := report.SenderBehindLine(analysis.SenderBehindCells(s, rows)); l != "" {
		fmt.Fprintln(w, l)
	}
}

// printDecisions prints a run's decisions (or why a cell is undecided),
// how its cells met a precision target and what deciding the undecided
// ones would take, from the run's stops.json and its study s.
func printDecisions(w io.Writer, run *results.Run, s *study.Study, unfinished []results.Cell) {
	if len(run.Stops) == 0 {
		return
	}
	d := report.Disturbed{Counted: analysis.CountedDisturbed(analysis.MarkedOf(run)), Study: s}
	if lines := report.DecisionLines(run.Stops, d); len(lines) > 0 {
		fmt.Fprintf(w, "decisions against %s (%s):\n", report.Versus(run.Stops, "the baseline"), report.DecisionTally(run.Stops))
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	for _, l := range report.PrecisionLines(run.Stops) {
		fmt.Fprintln(w, l)
	}
	for _, l := range report.Next(run.Stops, s, run.Env.Origin, time.Duration(run.Env.MachineS*float64(time.Second)), unfinished, d) {
		if l.Line != "" {
			fmt.Fprintln(w, l.Line)
		}
		if l.Command != "" {
			fmt.Fprintln(w, "  "+l.Command)
		}
	}
}

// run is `cnibench run`.
func (f *runFlags) run(cmd *cobra.Command, args []string) error {
	if err := runner.CheckEngine(f.engine); err != nil {
		return inputErr(err)
	}
	if f.engine != "kube" {
		if err := f.kube.refuseWithout(cmd.Flags(), "--engine kube"); err != nil {
			return err
		}
	} else if err := refuseInstallOnly(cmd.Flags(), "run --engine kube"); err != nil {
		return err
	}
	s, err := f.study(cmd, args)
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		// Validation refused such a name already; this keeps a name
		// like ../../etc/x from ever reaching the path.
		if !study.ValidName(s.Metadata.Name) {
			return &study.FieldError{File: s.Source, Field: "metadata.name", Msg: "not usable in the default run directory; give --out"}
		}
		out = filepath.Join("results", s.Metadata.Name+"-"+time.Now().Format("20060102-150405"))
	}
	prog := progress.New(cmd.ErrOrStderr())
	opt := runner.Options{
		Engine:     f.engine,
		Study:      s,
		OutDir:     out,
		JournalDir: f.journalDir,
		Progress:   prog,
		Resume:     f.resume != "",
	}
	if !opt.Resume {
		opt.Command = invocation(cmd, studyArgs(args, s), "out", "journal-dir", "dry-run")
	}
	if f.engine == "kube" {
		if err := f.kubeOptions(&opt); err != nil {
			return inputErr(err)
		}
	}
	if f.dryRun {
		return f.check(cmd, s, opt)
	}
	if !opt.Resume {
		// A used --out is refused before the locks make their files
		// (/run/cnibench, its lock); the runner asks again under them.
		if err := runner.CheckOut(out); err != nil {
			return inputErr(err)
		}
	}
	// One run or cleanup at a time on this host, and none while a
	// dead run's journal waits for cleanup.
	jdir := cmp.Or(opt.JournalDir, journal.DefaultDir)
	if f.engine == "kube" {
		// beginRun's refusal names it too.
		opt.Cleanup = cmdline.Quote(kubeCleanupWords(cmd.Flags()))
	}
	lock, err := beginRun(&opt, jdir)
	if err != nil {
		return inputErr(err)
	}
	defer lock.Release()
	release, err := holdRunDir(out, opt.Resume)
	if err != nil {
		return inputErr(err)
	}
	defer release()
	noteJournalDir(cmd.Context(), jdir)
	noteCleanup(cmd.Context(), opt.Cleanup, f.engine == "kube")
	dir, err := runner.Run(cmd.Context(), opt)
	if err != nil {
		return runFailure(dir, err)
	}
	if run, err := results.Load(dir); err == nil {
		printOutcome(cmd.OutOrStdout(), run, s)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(dir, "report.html"))
	return nil
}

// kubeOptions fills in a kube run's cluster and its journal directory:
// the kube runs' own (kubeJournalDir) unless --journal-dir says, and
// never one local runs journal in (refuseLocalJournalDir).
func (f *runFlags) kubeOptions(opt *runner.Options) error {
	quietKlog()
	opt.Kube = f.kube.config()
	if err := opt.Kube.Validate(); err != nil {
		return err
	}
	if opt.JournalDir != "" {
		return refuseLocalJournalDir(opt.JournalDir)
	}
	var err error
	opt.JournalDir, err = kubeJournalDir()
	return err
}

// check is `cnibench run --dry-run`: the study and this machine (or
// cluster) checked, what the run would do said, nothing changed.
func (f *runFlags) check(cmd *cobra.Command, s *study.Study, opt runner.Options) error {
	if opt.Resume {
		return inputErr(fmt.Errorf("--dry-run checks a study before it runs and --resume continues one; use them apart"))
	}
	d, err := runner.Check(cmd.Context(), opt)
	if d.Engine != "" {
		command := opt.Command
		if f.out != "" {
			// The rerun commands a run records leave --out out (it is
			// taken by then); this one is the run asked for.
			command = append(slices.Clip(command), "--out", f.out)
		}
		printDryRun(cmd.OutOrStdout(), s, d, command, err)
	}
	return refusal(err)
}

// refusal is the error of a preflight that stopped a run or a dry run:
// bad input, but for the nodes' passing state (engine.ErrTransient:
// agents of two images mid-rollout), a runtime failure.
func refusal(err error) error {
	if errors.Is(err, engine.ErrTransient) {
		return err
	}
	return inputErr(err)
}

// runFailure is the error of a run that failed: a refusal before it
// began is bad input (refusal), and so is a resume refused once its
// cluster was up (another server node: resuming again would be refused
// alike, so no resume command is suggested); one that left partial
// results in dir says where, and how to continue it.
func runFailure(dir string, err error) error {
	if runner.IsPreflight(err) || runner.IsResumeRefused(err) {
		return refusal(err)
	}
	if dir == "" {
		return err
	}
	hint := ""
	if !errors.Is(err, runner.ErrNothingMeasured) {
		// A run whose every cell was given up would resume to
		// nothing: its given-up cells stay given up.
		hint = resumeHint(dir)
	}
	return fmt.Errorf("%w (partial results in %s%s)", err, dir, hint)
}

// resumeHint says how to continue a run that stopped in dir, when it got
// as far as recording its environment (what --resume checks against).
func resumeHint(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, results.EnvFile))
	if err != nil {
		return ""
	}
	var env results.Env
	if json.Unmarshal(b, &env) != nil {
		// env.json is there but unreadable: --resume will say so.
		return "; continue it with: " + cmdline.Quote(resumeCommand(dir, nil))
	}
	return "; continue it with: " + cmdline.Quote(resumeCommand(dir, env.Origin))
}

// resumeCommand continues the run in dir: cnibench run --resume DIR,
// with the engine and the kube engine's flags of the command that
// started it (env.json's origin). --resume takes the study from the run
// directory but the engine from the command line: a kube run resumed
// without --engine kube would be refused as a local one, and without its
// --kubeconfig, --context or node selectors would reach another
// cluster.
func resumeCommand(dir string, origin *results.Origin) []string {
	words := []string{"cnibench", "run", "--resume", dir}
	if origin == nil || len(origin.Command) < 2 {
		return words
	}
	return append(words, engineFlags(origin.Command[2:])...)
}

// engineFlags are the words of run's arguments args that choose the
// engine and reach it: --engine and the kube flags, in words as a
// recorded command gives them (setFlags).
func engineFlags(args []string) []string {
	cmd := newRunCmd()
	fs := cmd.Flags()
	// A flag a later version dropped must not lose the others.
	fs.ParseErrorsWhitelist.UnknownFlags = true
	if err := fs.Parse(args); err != nil {
		return nil
	}
	var kf kubeFlags
	kf.register(pflag.NewFlagSet("kube", pflag.ContinueOnError))
	// A flag runs no longer take (recorded before they refused it) is
	// left out: the command would be refused.
	return append(setFlags(fs, func(name string) bool { return name == "engine" }),
		setFlags(fs, func(name string) bool { return slices.Contains(kf.names, name) && !slices.Contains(installOnly, name) })...)
}

// checkResumeEngine refuses --resume of a run on another engine than
// the one given, with the command that resumes it: a kube run resumed
// without --engine kube was refused for this machine's differing from
// its node, with no word of the flags it needed.
func checkResumeEngine(dir, engine string) error {
	b, err := os.ReadFile(filepath.Join(dir, results.EnvFile))
	if err != nil {
		return nil // the runner says what is missing
	}
	var env results.Env
	if json.Unmarshal(b, &env) != nil || env.Engine == "" || env.Engine == engine {
		return nil
	}
	return fmt.Errorf("--resume %s: the run was made on the %s engine, this one would run on %s; continue it with: %s",
		dir, env.Engine, engine, cmdline.Quote(resumeCommand(dir, env.Origin)))
}

// holdRunDir locks the run directory out for the run's lifetime
// (runner.LockRunDir): a resume of it, and the run itself, so that two
// resumes with their own journal directories, or a resume of a run
// still going, cannot write it at once. A new run's directory is made
// for the lock, and removed again by release if the run left it empty
// (refused before it began), with the parents made for it.
func holdRunDir(out string, resume bool) (release func(), err error) {
	made := ""
	if !resume {
		for d := filepath.Clean(out); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
				break
			}
			made = d
		}
		if made != "" {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return nil, fmt.Errorf("create run directory: %w", err)
			}
		}
	}
	unlock, err := runner.LockRunDir(out)
	if err != nil {
		return nil, err
	}
	return func() {
		unlock()
		for d := filepath.Clean(out); made != ""; d = filepath.Dir(d) {
			if os.Remove(d) != nil || d == made {
				break
			}
		}
	}, nil
}
