package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/compare"
	"github.com/cnibench/cnibench/internal/prove"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/seen"
	"github.com/cnibench/cnibench/internal/study"
)

// loadRun reads a run directory; a directory that is not one is bad input,
// and when it is advise's output the error names the A/B runs inside it,
// which are.
func loadRun(dir string) (*results.Run, error) {
	if err := checkRunDir(dir); err != nil {
		return nil, err
	}
	r, err := results.Load(dir)
	return r, inputErr(err)
}

// runStudy is the study a run directory ran (its study.yaml, resolved
// as stored: a record of what ran, whose references may name datapaths
// it left out); nil for a study the format no longer reads (resolveStudy
// says why).
func runStudy(dir string) *study.Study {
	s, _ := resolveStudy(dir)
	return s
}

// runStudyFile says whether path is a run directory's study.yaml (an
// env.json beside it), which is read as stored (study.Options.Stored).
func runStudyFile(path string) bool {
	if filepath.Base(path) != results.StudyFile {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(path), results.EnvFile))
	return err == nil
}

// fromRun is the run `advise --run` read and the study it ran (nil
// when the format no longer reads it, studyErr saying why); a zero
// fromRun is no run.
type fromRun struct {
	dir      string
	run      *results.Run
	study    *study.Study
	studyErr error
}

// readRun reads --run's run directory, before anything is inspected: a
// directory that holds no run, or a run made on another engine than
// advise's (checkRunEngine), is bad input. Its study is resolved as
// compare resolves a run's; one the format no longer reads (a field of
// another version) is no error, but the pages say so (notes).
func readRun(dir, engine string) (fromRun, error) {
	run, err := loadRun(dir)
	if err != nil {
		return fromRun{}, err
	}
	if err := checkRunEngine(dir, run, engine); err != nil {
		return fromRun{}, inputErr(err)
	}
	s, serr := resolveStudy(dir)
	return fromRun{dir: dir, run: run, study: s, studyErr: serr}, nil
}

// checkRunEngine refuses a run made on another engine than the one
// advise inspects with: a cluster's run beside this machine's candidates
// would give its server node's findings as reasons for knobs read here,
// and --prove would measure the cluster's cells on emulated nodes while
// saying it measured the run's own study (and a local run's the other
// way round). A run without env.json, or one that did not record its
// engine, is not refused: its engine is not known; nor is any run where
// engine is "" (--no-inspect: nothing is inspected, the rules read the
// run's own record).
func checkRunEngine(dir string, run *results.Run, engine string) error {
	ran := run.Env.Engine
	if !run.HasEnv || ran == "" || engine == "" || ran == engine {
		return nil
	}
	if ran == "kube" {
		return fmt.Errorf("--run %s: the run was made on the kube engine (a cluster's nodes), and advise --engine %s reads this machine; "+
			"give --engine kube with the run's cluster flags (--kubeconfig, --server-node, ...), or --no-inspect to advise from the run's env.json alone", dir, engine)
	}
	return fmt.Errorf("--run %s: the run was made on the %s engine (nodes emulated on the machine it ran on), and advise --engine %s "+
		"reads a cluster's server node; leave --engine %s out and run advise on the machine the run was made on, or give --no-inspect "+
		"in its place to advise from the run's env.json alone", dir, ran, engine, engine)
}

// notes are what the pages say above the run's findings of what limits
// them (advise.Report.Partial): a study that could not be read, without
// which the findings that need it are not looked for and whether the
// run finished is unknown; a run that did not finish; and what reading
// the run tolerated (a missing env.json, a truncated last line), as
// report and compare say it.
func (fr fromRun) notes() []string {
	var out []string
	switch {
	case fr.run == nil:
		return nil
	case fr.study == nil:
		out = append(out, fmt.Sprintf("%s's %s could not be read (%v): the findings that need it (%s) were not looked for, "+
			"and whether the run finished is not known", fr.dir, results.StudyFile, fr.studyErr, strings.Join(seen.NeedStudy(), ", ")))
	default:
		if u := analysis.Unfinished(fr.study, fr.run); len(u) > 0 {
			out = append(out, fmt.Sprintf("%s did not finish (%d of its %d cells were not done): "+
				"what it showed is what it measured so far", fr.dir, len(u), len(fr.study.Cells())))
		}
	}
	for _, w := range fr.run.Warnings {
		out = append(out, "reading "+fr.dir+": "+w)
	}
	return out
}

// options are a candidate's A/B options. One that answers a finding of
// the run (advise.Entry.Seen) is measured on the run's own study, its
// datapaths, workloads, replica counts and impairments narrowed to the
// cells its findings showed in (analysis.ScopeOf, and analysis.Picks
// where the lists' product holds more; its tunings are the candidate's A
// and B), the user's --set after them; the others as opt
// says. A fixed trial count N above abMin becomes abMin to N, as the
// built-in A/B's: the A/B is decided sequentially, and stops as soon as
// its cells are decided, where a fixed count runs all of them (a run's
// fixed 20 trials of 30 s per cell); either is bounded by --budget
// (prove.Plan).
func (fr fromRun) options(opt prove.Options, e *advise.Entry) prove.Options {
	if fr.run == nil || fr.study == nil || len(e.Seen) == 0 {
		return opt
	}
	var cells []results.Cell
	var findings []string
	for _, s := range e.Seen {
		cells = append(cells, s.Cells...)
		findings = append(findings, s.Finding)
	}
	file, err := filepath.Abs(filepath.Join(fr.dir, results.StudyFile))
	if err != nil {
		return opt
	}
	var narrow []string
	for _, kv := range analysis.ScopeOf(cells, fr.run.Stops, fr.study).Sets {
		if kv[0] != "tunings" {
			narrow = append(narrow, kv[0]+"="+kv[1])
		}
	}
	if only := fr.picks(file, cells, e, narrow, opt.Sets); only != "" {
		narrow = append(narrow, only)
	}
	if t := fr.study.Spec.Trials; !t.Adaptive() && t.Max > abMin {
		narrow = append(narrow, fmt.Sprintf("trials={min: %d, max: %d}", abMin, t.Max))
	}
	opt.Study, opt.Sets = file, append(narrow, opt.Sets...)
	opt.Resolve = func(sets []string) (*study.Study, error) {
		return study.Resolve(file, study.Options{Set: sets, Stored: true}, studyCatalog())
	}
	opt.Shape = fmt.Sprintf("the run %s's own study, narrowed to the cells where it showed %s", fr.dir, strings.Join(findings, " and "))
	return opt
}

// picks is the --set of spec.only that narrows the A/B to the finding's
// cells themselves, each in A and B, where the narrowed lists' product
// holds more (analysis.Picks); "only=[]" when it does not and the run
// had selectors of its own, which may name the tunings (or datapaths) A
// and B replace; "" otherwise. Selectors the user's --set leaves without
// their entries (--set replicas=[1] where a finding was at 4 pairs)
// give way to the lists.
func (fr fromRun) picks(file string, cells []results.Cell, e *advise.Entry, narrow, user []string) string {
	free := []string{"tuning"}
	if e.Rule.ProvesDatapaths() {
		free = append(free, "datapath")
	}
	fallback := ""
	if len(fr.study.Spec.Only) > 0 {
		fallback = "only=[]"
	}
	only := analysis.Picks(cells, fr.run.Stops, fr.study, free...)
	if only == "" {
		return fallback
	}
	sets := append(append(slices.Clone(narrow), "only="+only), user...)
	if _, err := study.Resolve(file, study.Options{Set: sets, Stored: true}, studyCatalog()); err != nil {
		return fallback
	}
	return "only=" + only
}

// abMin is the fewest trials per cell of an A/B on a run's cells: the
// built-in A/B's minimum (prove/ab.yaml).
const abMin = 3

// checkRunDir says whether dir holds a run (its study.yaml).
func checkRunDir(dir string) error {
	_, err := os.Stat(filepath.Join(dir, results.StudyFile))
	if err == nil {
		return nil
	}
	if _, aerr := os.Stat(filepath.Join(dir, advise.FileJSON)); aerr != nil {
		return inputErr(fmt.Errorf("%s is not a run directory: %w", dir, err))
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "prove-*", results.StudyFile))
	for i, r := range runs {
		runs[i] = filepath.Dir(r)
	}
	hint := "it is advise's output (" + advise.FileJSON + "), and it holds no A/B run (advise without --prove)"
	if len(runs) > 0 {
		hint = "it is advise's output; its A/B runs are " + strings.Join(runs, ", ")
	}
	return inputErr(fmt.Errorf("%s is not a run directory: %s", dir, hint))
}

// head names the runs of a comparison, and says when they are one run by
// two paths (a symbolic link, a trailing "/."), whose every ratio is 1 by
// construction. That is allowed (a check of the gate on a run with
// itself), but no finding. sa and sb are each run's study as
// resolveStudy read it, and why not.
func head(dirA, dirB string, a, b *results.Run, sa, sb sides) compare.Head {
	fa, errA := os.Stat(dirA)
	fb, errB := os.Stat(dirB)
	same := errA == nil && errB == nil && os.SameFile(fa, fb)
	h := compare.NewHead(dirA, dirB, a, b, studyCells(sa.study), studyCells(sb.study), same)
	// A run killed before its end has partial numbers, which a gate in
	// CI should not take for finished ones silently; a fixed design
	// records no stops, so analysis.Unfinished counts its cells' trials.
	if s := sa.study; s != nil {
		h.UnfinishedA, h.CellsA = len(analysis.Unfinished(s, a)), len(s.Cells())
		h.ResumeA = resumeCommand(dirA, a.Env.Origin)
	}
	if s := sb.study; s != nil {
		h.UnfinishedB, h.CellsB = len(analysis.Unfinished(s, b)), len(s.Cells())
		h.ResumeB = resumeCommand(dirB, b.Env.Origin)
	}
	if sa.err != nil {
		h.NoStudyA = sa.err.Error()
	}
	if sb.err != nil {
		h.NoStudyB = sb.err.Error()
	}
	return h
}

// sides is one run's study as resolveStudy read it (nil), and why not.
type sides struct {
	study *study.Study
	err   error
}

// resolveStudy is the study a run directory ran, resolved as runStudy
// does, with why it could not be.
func resolveStudy(dir string) (*study.Study, error) {
	return study.Resolve(filepath.Join(dir, results.StudyFile), study.Options{Stored: true}, studyCatalog())
}

// studyCells are a study's cells; nil for no study (unknown).
func studyCells(s *study.Study) []results.Cell {
	if s == nil {
		return nil
	}
	return s.Cells()
}
