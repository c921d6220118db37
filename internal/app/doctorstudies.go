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
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

// writeStudiesHere says, for each built-in study and profile, whether it
// runs on this machine, as `cnibench run --dry-run` would find it
// (runner.Check: the preflight, which builds nothing; its probes may
// load kernel modules, as doctor's own do), with its machine
// time in trials (also where it does not run), and why not where it does
// not. Without root (the local
// engine's preflight needs it) it says so once.
func writeStudiesHere(ctx context.Context, out io.Writer, root bool) error {
	if !root {
		// Every study's preflight would say the same.
		_, err := fmt.Fprintln(out, "STUDY: which built-in studies run here is checked as root (the local engine's preflight needs it)")
		return err
	}
	return writeStudies(ctx, out, runner.Options{}, "HERE")
}

// writeStudies is writeStudiesHere with the engine of with (its Study set
// per row). On a cluster (engine kube) a study of several datapaths runs the
// one that stands for the cluster's CNI ("yes, as NAME"), and the
// preflight's warnings (a datapath label that stands for another CNI)
// are reasons too.
func writeStudies(ctx context.Context, out io.Writer, with runner.Options, where string) error {
	kube := with.Engine == "kube"
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "STUDY\tPROFILE\tRUNS %s\tMACHINE TIME IN TRIALS\n", where)
	var why reasons
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
			opt := with
			opt.Study = s
			d, err := runner.Check(ctx, opt)
			left := s.DatapathNames()
			switch {
			case err != nil:
			case kube:
				// The cluster's CNI picked one of several.
				if len(left) < len(all) {
					runs = "yes, as " + left[0]
				}
				for _, warning := range d.Warnings {
					why.add(name, label, "runs; warning: "+warning)
				}
			case len(left) < len(all):
				// With skipUnavailable the preflight keeps the datapaths
				// that can run; the time is then of those.
				skipped := slices.DeleteFunc(all, func(d string) bool { return slices.Contains(left, d) })
				runs = fmt.Sprintf("without %d datapath(s)", len(skipped))
				why.add(name, label, skipReason(skipped, d.Notes))
			}
			// The time is given also where the study does not run: what
			// it would cost on a machine where it does is part of the
			// choice (the dry run says the same).
			time := plannedText(s)
			if err != nil {
				runs = "no"
				why.add(name, label, withoutPlace(err))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", name, label, runs, time)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(why) > 0 {
		fmt.Fprint(out, "\nwhy not, or not whole:\n")
		for _, r := range why {
			fmt.Fprint(out, wrap(r.study+" "+strings.Join(r.profiles, ", ")+": "+r.text, "  ", doctorWidth))
		}
	}
	return nil
}

// skipReason says why a study runs without the skipped datapaths: the
// preflight's own skip notes (results.SkipNote, the text env.json and
// the report keep), which name what each lacks, the entry's needs
// beyond its datapath's features (ethtool, iptables, br_netfilter, ...)
// included: the datapath table above has only the latter.
func skipReason(skipped, notes []string) string {
	text := "runs without " + strings.Join(skipped, ", ") + " (spec.skipUnavailable)"
	var skips []string
	for _, n := range notes {
		if results.IsSkipNote(n) {
			skips = append(skips, n)
		}
	}
	if len(skips) == 0 {
		return text
	}
	return text + ": " + strings.Join(skips, "; ")
}

// reasons are the lines under the table, in the table's order: why a
// study's profile does not run (whole), each text once per study with
// the profiles it holds for ("cni-compare (default), quick: ..."), since
// a study's profiles mostly share the reason.
type reasons []reason

type reason struct {
	study, text string
	profiles    []string
}

func (r *reasons) add(study, profile, text string) {
	for i := range *r {
		if x := &(*r)[i]; x.study == study && x.text == text {
			x.profiles = append(x.profiles, profile)
			return
		}
	}
	*r = append(*r, reason{study, text, []string{profile}})
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
