package app

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/compare"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/suggest"
)

// errGateFailed makes a failed --fail-if exit 1 (ExitFailure), apart from
// bad input (2): a CI job tells a regression from a typo.
var errGateFailed = errors.New("regression gate failed (see the table)")

func newCompareCmd() *cobra.Command {
	var metrics, failIf []string
	var format string
	cmd := &cobra.Command{
		Use:   "compare DIR_A DIR_B",
		Short: "Set two runs side by side: B relative to A per cell, with 95% intervals and Welch's p",
		Long: `compare matches the cells of two run directories by tuning, workload and replica count
(and datapath when the runs have several) and prints a table: each run's mean with its
95% interval, the ratio B/A with Fieller's interval, and Welch's p. Use it for the same
study on two machines, on the local and the kube engine, or before and after a change.

--fail-if 'METRIC < -5%' (or '> +10%' for metrics where higher is worse) turns it into a
regression gate: it exits 1 when a cell's change of METRIC is significant (B/A's
interval at 1 - 0.05/m, m the cells and metrics judged, excludes 1: Bonferroni) and beyond the
threshold; noise (an interval covering 1) never fails it. Without %, the threshold is
absolute, in the unit the samples record ('retransmits > +50'; bitrate in bit/s), judged on
B - A: for counts that are usually 0, where no relative change means anything. It never passes on no
evidence: a cell of B's study that B has no trial of (every trial failed, the run ended
or its budget ran out before it), that B gave up (a trial failed every attempt) or did not
finish (the run ended first) whatever trials it left, whose trials in B lack the metric
A has there, or with fewer than 2 trials on a side fails it. Cells B's study leaves
out are named above the table, not judged. The
metrics of the rules are compared even if --metric leaves them out. Exit 1 means only a
failed gate: bad input exits 2, output that could not be written 4. With --format csv or
json, what the page says of the runs (one did not finish, their studies or machines
differ) goes to stderr.`,
		Example: "  cnibench compare results/rps-local results/rps-kube\n" +
			"  cnibench compare before/ after/ --metric bitrate --metric retransmits\n" +
			"  cnibench compare main/ pr/ --fail-if 'bitrate < -5%' --format csv",
		Args: needArgs(2, "two run directories, DIR_A and DIR_B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd, args[0], args[1], compareFlags{metrics, failIf, format})
		},
	}
	cmd.Flags().StringArrayVar(&metrics, "metric", []string{headline}, "metric to compare (repeatable; \"headline\" for each workload's key metrics, \"\" for every metric both runs have)")
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "regression rule 'METRIC < -N%' or 'METRIC > +N%', or without % an absolute difference in the samples' unit (repeatable): exit 1 when a cell's change is significant and beyond it")
	cmd.Flags().StringVar(&format, "format", "md", "output format: md, csv or json")
	return cmd
}

// compareFlags are compare's flags as given.
type compareFlags struct {
	metrics, failIf []string
	format          string
}

// runCompare compares run dirB with run dirA and applies the gate's
// rules; the error says which of bad input (exit 2), an output that
// could not be written (ExitOutput) or a failed gate (exit 1) it was.
func runCompare(cmd *cobra.Command, dirA, dirB string, f compareFlags) error {
	if !slices.Contains(compare.Formats, f.format) {
		return inputErr(fmt.Errorf("--format %q: one of %s", f.format, strings.Join(compare.Formats, ", ")))
	}
	metrics := expandHeadline(f.metrics)
	rules, err := parseRules(f.failIf)
	if err != nil {
		return err
	}
	var gated []string
	for _, r := range rules {
		metrics = appendMissing(metrics, r.Metric)
		gated = append(gated, r.Metric)
	}
	a, err := loadRun(dirA)
	if err != nil {
		return fmt.Errorf("run A: %w", err)
	}
	b, err := loadRun(dirB)
	if err != nil {
		return fmt.Errorf("run B: %w", err)
	}
	for _, d := range []struct{ side, dir string }{{"A", dirA}, {"B", dirB}} {
		// A run still writing is no run that ended short: its cells not
		// yet reached would fail a gate as regressions.
		if runner.RunDirBusy(d.dir) {
			return inputErr(fmt.Errorf("run %s: %s: %w: compare it once it has ended", d.side, d.dir, runner.ErrRunDirBusy))
		}
	}
	if err := knownMetrics(f.metrics, rules, compare.Metrics(a.Samples, b.Samples)); err != nil {
		return inputErr(err)
	}
	// Each run's study says which cells it was to run: one it has no
	// trial of that the other has fails a gate (the run ended first:
	// either may be the one cut short), one the other's study leaves
	// out is named (the head's LeftOutB and LeftOutA).
	sa, errA := resolveStudy(dirA)
	sb, errB := resolveStudy(dirB)
	if err := errors.Join(errA, errB); err != nil && len(rules) > 0 {
		// Without the cells a run was to run, the ones it never reached
		// cannot fail: a gate does not pass on no evidence.
		return inputErr(fmt.Errorf("--fail-if needs each run's study to know the cells it was to run: %w", err))
	}
	// A rule's metric that one run measured in no cell is still judged
	// (knownMetrics refused it when neither has it): every cell of it the
	// other run has fails as not measured, and the table and the other
	// rules' verdicts are still given; it was bad input (exit 2, nothing
	// on stdout) that hid another rule's regression.
	rows := compare.Runs(a, b, metrics, gated, studyCells(sa), studyCells(sb))
	markUnfinished(rows, a, b, sa, sb)
	verdicts, err := gate.Check(rules, compare.Cells(rows))
	if err != nil {
		if !compare.ShareCell(a, b, studyCells(sa), studyCells(sb)) {
			// Not "no cell has the metric": both may have it, each in
			// cells of its own.
			err = fmt.Errorf("--fail-if: the runs have no cell in common (no datapath, tuning, workload, replica count and impairment that both ran or were to run): compare two runs of one study")
		}
		return inputErr(err)
	}
	h := head(dirA, dirB, a, b, sides{sa, errA}, sides{sb, errB})
	h.InANotB, h.InBNotA = compare.OneRunOnly(a, b, metrics, gated)
	warn(cmd.ErrOrStderr(), rules, f.format, h, rows)
	if err := compare.Write(cmd.OutOrStdout(), f.format, h, rows, verdicts); err != nil {
		return outputErr(fmt.Errorf("writing the comparison of %s and %s (--format %s) to standard output: %w%s", dirA, dirB, f.format, err,
			gateNote(verdicts)))
	}
	if gate.Failed(verdicts) {
		return errGateFailed
	}
	return nil
}

// markUnfinished marks the rows of the cells each run ended before
// finishing, by its study (sa, sb; nil: unknown, nothing marked). A B
// cut short within its cells fails them, as it fails the cells it never
// reached: a CI job stopped at two trials a cell passed on intervals too
// wide to exclude 1. An A cut short is judged on what it has, but its
// rows say so, as the header does.
func markUnfinished(rows []compare.Row, a, b *results.Run, sa, sb *study.Study) {
	if sb != nil {
		compare.MarkUnfinished(rows, analysis.Unfinished(sb, b), planned(sb.Spec.Trials))
	}
	if sa != nil {
		compare.MarkUnfinishedA(rows, analysis.Unfinished(sa, a), planned(sa.Spec.Trials))
	}
}

// gateNote tells the gate's verdict when the table that shows it could
// not be written: the exit code then says the output failed, not how
// the gate went.
func gateNote(verdicts []gate.Verdict) string {
	switch {
	case len(verdicts) == 0:
		return ""
	case gate.Failed(verdicts):
		return " (the regression gate failed)"
	}
	return " (the regression gate passed)"
}

// parseRules reads the --fail-if rules.
func parseRules(texts []string) ([]gate.Rule, error) {
	var rules []gate.Rule
	for _, s := range texts {
		r, err := gate.Parse(s)
		if err != nil {
			return nil, inputErr(err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// warn prints on stderr, once the input is known good (bad input is one
// line): each rule that fails on an improvement of its metric
// (gate.Rule.Warning: legitimate, "must improve by 5%", but more often a
// slip of the sign that would fail CI on a good change), and for csv and
// json, which have no place for them in the table, the page's words on
// the runs (a partial run, runs that differ, cells bound by one core),
// which a CI log then keeps.
func warn(stderr io.Writer, rules []gate.Rule, format string, h compare.Head, rows []compare.Row) {
	var lines []string
	for _, r := range rules {
		if w := r.Warning(); w != "" {
			lines = append(lines, w)
		}
		if w := absoluteUnit(r); w != "" {
			lines = append(lines, w)
		}
	}
	if format != "md" {
		lines = append(lines, compare.Warnings(h, rows)...)
	}
	for _, l := range lines {
		fmt.Fprintln(stderr, "warning: "+l)
	}
}

// absoluteUnit says of an absolute rule (no %) in which unit its
// threshold is, but for a count, where a difference is what an absolute
// rule is for: a % left out makes one of any rule, and 'bitrate < -5'
// is a fall of 5 bit/s (the table shows Gbit/s), which any significant
// fall is past, and 'rtt_p99_us > +10' a rise of 10 us. "" for a
// relative rule or a count.
func absoluteUnit(r gate.Rule) string {
	unit := analysis.Unit(r.Metric)
	if !r.Absolute || unit == "count" {
		return ""
	}
	in := fmt.Sprintf("%g in the unit %s's samples record", r.Change, r.Metric)
	if unit != "" {
		in = fmt.Sprintf("%g %s, the unit %s's samples record", r.Change, unit, r.Metric)
	}
	if shown := analysis.Display(r.Metric); shown.Factor != 1 {
		in += " (the table shows " + shown.Unit + ")"
	}
	return fmt.Sprintf("rule '%s' has no %%, so its threshold is absolute: %s; for a relative change write '%s%%'", r.Text, in, r.Text)
}

// headline stands for the workloads' key metrics (analysis.HeadlineMetrics:
// bitrate, transactions, latency percentiles, requests, start-up times,
// CPU per packet): each cell shows the ones its workload has, so a study
// of several kinds of workload compares them all by default.
const headline = "headline"

// expandHeadline replaces "headline" in a --metric list by the metrics it
// stands for.
func expandHeadline(list []string) []string {
	var out []string
	for _, m := range list {
		if m == headline {
			out = append(out, analysis.HeadlineMetrics...)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// knownMetrics refuses a metric that --metric or --fail-if names and
// neither run has: a slip ("bitrat") would otherwise compare nothing and
// exit 0, or gate on nothing. One that a run has but not the other is
// the table's to show.
func knownMetrics(named []string, rules []gate.Rule, have []string) error {
	check := func(flag, text, m string) error {
		if m == "" || m == headline || slices.Contains(have, m) {
			return nil
		}
		hint := ""
		// Metrics come in families (rtt_us, rtt_p99_us): every one
		// equally near, up to four.
		switch c := suggest.Nearest(m, have, 4); len(c) {
		case 0:
		case 1:
			hint = fmt.Sprintf("did you mean %q? ", c[0])
		default:
			hint = fmt.Sprintf("did you mean one of %s? ", quoted(c))
		}
		what := fmt.Sprintf("metric %q", m)
		if text == m {
			what = "this metric"
		}
		return fmt.Errorf("%s %q: neither run has %s (%sthey have: %s)", flag, text, what, hint, strings.Join(have, ", "))
	}
	for _, m := range named {
		if err := check("--metric", m, m); err != nil {
			return err
		}
	}
	for _, r := range rules {
		if err := check("--fail-if", r.Text, r.Metric); err != nil {
			return err
		}
	}
	return nil
}

// quoted lists names each in quotes: "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// appendMissing adds m unless the list has it or is the "every metric"
// list (one empty entry).
func appendMissing(list []string, m string) []string {
	for _, x := range list {
		if x == m || x == "" {
			return list
		}
	}
	return append(list, m)
}

// planned is a design's trials per cell as a verdict names them: "5",
// or "3 to 10" for adaptive repetitions.
func planned(t study.Trials) string {
	if t.Adaptive() {
		return fmt.Sprintf("%d to %d", t.Min, t.Max)
	}
	return strconv.Itoa(t.Max)
}
