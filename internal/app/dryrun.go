package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// printDryRun says what `cnibench run` would do with study s, from the
// preflight's findings d (runner.Check), and the command (without
// --dry-run) that does it. A refused preflight (err) ends it: the error
// follows on stderr, at its file and line.
func printDryRun(w io.Writer, s *study.Study, d runner.DryRun, command []string, err error) {
	sp, p := &s.Spec, d.Plan
	from := s.Source
	if s.Profile != "" {
		from += ", profile " + s.Profile
	}
	matrix := fmt.Sprintf("%d datapath(s) x %d replica count(s) x %d workload variant(s) x %d tuning(s) x %d impairment(s)",
		len(sp.Datapaths), len(sp.Replicas), len(s.Variants()), len(sp.Tunings), len(s.ImpairmentCells()))
	if len(sp.Only) > 0 {
		matrix = fmt.Sprintf("those spec.only picks of %s, and the cells they are compared with", matrix)
	}
	fmt.Fprintf(w, "study %s (%s): %.0f cells: %s\n", s.Metadata.Name, from, p.Cells, matrix)
	fmt.Fprintf(w, "repetitions: %s\n", d.Design)
	// One tuning is worth listing too when it sets something: every
	// trial of the run then runs with it.
	if len(sp.Tunings) > 1 || (len(sp.Tunings) == 1 && !sp.Tunings[0].IsBaseline()) {
		fmt.Fprintln(w, "tunings (each set for its own trials only, and put back after each):")
		for _, t := range sp.Tunings {
			fmt.Fprintf(w, "  %s: %s\n", t.Name, t.Describe())
		}
	}
	per := fmt.Sprintf("duration %s + cooldown %s per trial", study.ShortDuration(sp.Duration.Duration), study.ShortDuration(sp.Cooldown.Duration))
	if p.SearchSeconds > 0 {
		per += ", and the loss-ceiling searches' probes"
	}
	trials := report.DurationText(study.Seconds(p.MaxSeconds))
	if sp.Trials.Adaptive() {
		trials = fmt.Sprintf("%s at %d trials per cell to %s at %d", report.DurationText(study.Seconds(p.MinSeconds)), sp.Trials.Min, trials, sp.Trials.Max)
	} else {
		trials += fmt.Sprintf(" at %s per cell", adaptive.TrialCount(sp.Trials.Max))
	}
	fmt.Fprintf(w, "machine time in trials: %s (%s; set-up of nodes and pods not included)", trials, per)
	if b := sp.Budget.Duration; b > 0 {
		fmt.Fprintf(w, "; the budget of %s (set-up included) stops it there", report.DurationText(b))
	}
	changed := "nothing on this host was changed"
	if len(d.HostChanges) > 0 {
		changed = "this host was changed only thus: " + strings.Join(d.HostChanges, "; ")
	}
	if err != nil {
		fmt.Fprintf(w, "\npreflight (%s engine): refused, so it would not run here (why: below); %s\n", d.Engine, changed)
		return
	}
	fmt.Fprintf(w, "\npreflight (%s engine): passed; %s\n", d.Engine, changed)
	for _, n := range d.Notes {
		fmt.Fprintln(w, "  note: "+n)
	}
	for _, n := range d.Warnings {
		fmt.Fprintln(w, "  warning: "+n)
	}
	fmt.Fprintln(w, "to run it: "+cmdline.Quote(command))
}
