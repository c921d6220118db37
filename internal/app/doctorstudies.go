package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// writeStudiesHere says, for each built-in study and profile, whether it
// runs on this machine, as `cnibench run --dry-run` would find it
// (runner.Check: the preflight, which changes nothing), with its machine
// time in trials (also where it does not run), and why not where it does
// not. Without root (the local
// engine's preflight needs it) it says so once.
func writeStudiesHere(ctx context.Context, out io.Writer, root bool) error {
	if !root {
		// Every study's preflight would say the same.
		_, err := fmt.Fprintln(out, "STUDY: which built-in studies run here is checked as root (the local engine's preflight needs it)")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STUDY\tPROFILE\tRUNS HERE\tMACHINE TIME IN TRIALS")
	var reasons []string
	for _, name := range study.Builtins() {
		base, err := study.Resolve(name, study.Options{}, studyCatalog())
		if err != nil {
			return err
		}
		for _, profile := range append([]string{""}, base.ProfileNames()...) {
			s, err := study.Resolve(name, study.Options{Profile: profile}, studyCatalog())
			if err != nil {
				return err
			}
			label := profile
			if label == "" {
				label = "(default)"
			}
			runs, all := "yes", s.DatapathNames()
			_, err = runner.Check(ctx, runner.Options{Study: s})
			// With skipUnavailable the preflight keeps the datapaths that
			// can run; the time is then of those.
			if left := s.DatapathNames(); err == nil && len(left) < len(all) {
				skipped := slices.DeleteFunc(all, func(d string) bool { return slices.Contains(left, d) })
				runs = fmt.Sprintf("without %d datapath(s)", len(skipped))
				reasons = append(reasons, wrap(name+" "+label+": runs without "+strings.Join(skipped, ", ")+
					" (spec.skipUnavailable; why they are unavailable is above)", "  ", doctorWidth))
			}
			// The time is given also where the study does not run: what
			// it would cost on a machine where it does is part of the
			// choice (the dry run says the same).
			time := plannedText(s)
			if err != nil {
				runs = "no"
				reasons = append(reasons, wrap(name+" "+label+": "+withoutPlace(err), "  ", doctorWidth))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", name, label, runs, time)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(reasons) > 0 {
		fmt.Fprint(out, "\nwhy not, or not whole:\n")
		for _, r := range reasons {
			fmt.Fprint(out, r)
		}
	}
	return nil
}

// plannedText is a study's machine time in trials, from trials.min to
// trials.max per cell, and its budget.
func plannedText(s *study.Study) string {
	p := s.Plan()
	t := report.DurationText(study.Seconds(p.MaxSeconds))
	if s.Spec.Trials.Adaptive() {
		t = report.DurationText(study.Seconds(p.MinSeconds)) + " to " + t
	}
	if b := s.Spec.Budget.Duration; b > 0 {
		t += ", budget " + report.DurationText(b)
	}
	return t
}

// withoutPlace is a preflight error without the built-in study's file
// and line, which the table names already.
func withoutPlace(err error) string {
	var fe *study.FieldError
	if errors.As(err, &fe) && fe.Err != nil {
		return fe.Msg
	}
	return err.Error()
}
