package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/cnibench/cnibench/internal/stats"
)

// Absence says why B has no value of a cell's metric that A has
// (Cell.Missing). Every kind fails the gate: B brought no evidence that
// the cell is unchanged, and a gate that passes on none would pass a
// change that broke the cell, or a CI job cut short before it.
type Absence string

const (
	// AllFailed: B tried the cell and every trial failed there (or it
	// gave the cell up before its first: Cell.GaveUp says why).
	AllFailed Absence = "failed"
	// NotReached: B's study includes the cell but B has no trial of it:
	// the run ended before it (killed, interrupted, a CI timeout).
	NotReached Absence = "not_reached"
	// BudgetOut: B's budget ran out before the cell's block, which then
	// ran no trial (stops.json's status budget, "budget spent before
	// this block").
	BudgetOut Absence = "budget_out"
)

// Cell is one matched cell of a comparison: its finite values in run A
// and in run B.
type Cell struct {
	Key    string
	Metric string
	A, B   []float64
	// Missing: A has the cell and B none of its values; Absent says why
	// ("" is AllFailed).
	Missing bool
	Absent  Absence
	// NotMeasured: B has counted trials of the cell, none with a value
	// of the metric, which A has there. It fails: B brought no evidence
	// of the metric in the cell (with one value of five it failed as too
	// few to judge; with none it passed as "not judged").
	NotMeasured bool
	// GaveUp is why B's runner gave the cell up ("" when it did not):
	// the cell fails whatever trials it left before.
	GaveUp string
	// MissingA: B has the cell and A none of its values (A is the run
	// cut short, or every trial failed there); AbsentA says why ("" is
	// AllFailed) and GaveUpA why A gave it up, if it did. It fails: B
	// has no baseline to be judged against.
	MissingA bool
	AbsentA  Absence
	GaveUpA  string
	// NotMeasuredA: A has counted trials of the cell, none with a value
	// of the metric, which B has there. It fails as MissingA does: B's
	// values have no baseline (it was no cell, and passed unsaid).
	NotMeasuredA bool
	// Unfinished: B ended before it finished the cell (its study's
	// design says so: analysis.Unfinished), so B's trials of it are a
	// part of what it was to run, PlannedB trials ("5", "3 to 10"). It
	// fails whatever they say, as a cell B never reached does: a CI job
	// cut short at two trials a cell had intervals that could not
	// exclude 1, and passed.
	Unfinished bool
	PlannedB   string
	// Show renders a value of the metric with its unit for messages
	// ("12.06 Gbit/s"); nil: the plain number.
	Show func(float64) string
}

// absence is why B lacks the cell, AllFailed for a Missing cell that
// does not say.
func (c Cell) absence() Absence {
	if c.Absent == "" {
		return AllFailed
	}
	return c.Absent
}

// Outcomes of a verdict, as the CSV and JSON give them.
const (
	OutcomeFail      = "fail"
	OutcomePass      = "pass"
	OutcomeNotJudged = "not_judged"
)

// Verdict of one rule on one cell.
type Verdict struct {
	Rule Rule
	Cell Cell
	// Fail: significant and beyond the threshold, or not judged for want
	// of evidence (missing in B, given up or unfinished there, not
	// measured there, fewer than 2 trials on a side).
	Fail bool
	// Judged: the verdict rests on the cell's interval (or Welch's test)
	// at Level; false for a cell decided without one.
	Judged bool
	// Level is the confidence the cell was judged at (Bonferroni over
	// the judged cells); 0 when not judged.
	Level float64
	// Change is the estimated relative change, (mean(B) − mean(A)) /
	// |mean(A)|: B/A − 1 for a positive A, 1 − B/A for a negative one.
	// Where A's mean is not clearly away from 0 (P decided) it is ±Inf,
	// the sign of B's difference from A (0 for none): no relative change
	// means anything there. For an absolute rule (Rule.Absolute) it is
	// the difference mean(B) − mean(A) in the metric's unit. NaN when
	// not judged.
	Change float64
	// Low and High bound B/A at Level (Fieller's interval), or for an
	// absolute rule B − A (Welch's); NaN without one (not judged, or A's
	// mean not clearly away from 0, where P decided).
	Low, High float64
	// P is Welch's p where it decided (A's mean not clearly away from
	// 0); NaN otherwise.
	P float64
	// Why says which condition decided, for the CI log.
	Why string
}

// Outcome is the verdict in one word: fail, pass, or not_judged (a cell
// passed without an interval). No verdict is not_judged any more, since
// every cell without an interval fails (B's trials lacking the metric
// made one); the word stays for the readers of compare's JSON and CSV.
func (v Verdict) Outcome() string {
	switch {
	case v.Fail:
		return OutcomeFail
	case v.Judged:
		return OutcomePass
	}
	return OutcomeNotJudged
}

// Check applies every rule to every cell of its metric. A rule whose
// metric no cell has is an error: a typo must not pass a gate silently.
//
// The cells are judged together, so the intervals are Bonferroni's: at
// confidence 1 − 0.05/m for m judged cells, each a cell and metric
// (over all rules, counted once however many rules judge it; cells
// holds each cell and metric once). At 95% each,
// 20 cells of pure noise would fail a gate in about two runs of three;
// this way noise fails it in at most 5% of runs however many cells the
// study has. A cell in A that B lacks, gave up, did not finish or did
// not measure the metric in fails, so does one of B that A lacks or did
// not measure it in (MissingA, NotMeasuredA), and so does one with fewer
// than 2 trials on a side: a
// change that breaks a cell (or the collector of a metric), or a run cut
// short, must not pass because it left too little to compare.
func Check(rules []Rule, cells []Cell) ([]Verdict, error) {
	for _, r := range rules {
		if !slices.ContainsFunc(cells, func(c Cell) bool { return c.Metric == r.Metric }) {
			return nil, fmt.Errorf("--fail-if %q: no cell of both runs has metric %q", r.Text, r.Metric)
		}
	}
	// m counts the cells judged, each a cell and metric, once however
	// many rules judge it: two rules of one metric ('bitrate < -5%' and
	// 'bitrate > +50%') read the one interval, whose level 1 − 0.05/m
	// bounds the chance that it misses; counted per rule, one cell was
	// judged at 97.5%.
	m := 0
	for _, c := range cells {
		if judged(c) && slices.ContainsFunc(rules, func(r Rule) bool { return r.Metric == c.Metric }) {
			m++
		}
	}
	conf := stats.Confidence
	if m > 1 {
		conf = 1 - (1-stats.Confidence)/float64(m)
	}
	var out []Verdict
	for _, r := range rules {
		for _, c := range cells {
			if c.Metric == r.Metric {
				out = append(out, judge(r, c, conf))
			}
		}
	}
	return out, nil
}

// judged: the cell has an interval to judge (two values on each side,
// and B neither lost, gave it up nor left it unfinished).
func judged(c Cell) bool {
	return !c.Missing && !c.MissingA && !c.NotMeasured && !c.NotMeasuredA && c.GaveUp == "" && !c.Unfinished && len(c.A) >= 2 && len(c.B) >= 2
}

func judge(r Rule, c Cell, conf float64) Verdict {
	nan := math.NaN()
	if why, fail, ok := unjudged(c); ok {
		return Verdict{Rule: r, Cell: c, Fail: fail, Why: why, Change: nan, Low: nan, High: nan, P: nan}
	}
	v := Verdict{Rule: r, Cell: c, Judged: true, Level: conf, Low: nan, High: nan, P: nan}
	if r.Absolute {
		return judgeDifference(r, c, v)
	}
	ci := stats.RatioAt(c.B, c.A, conf)
	level := levelText(conf)
	ma, mb := stats.Describe(c.A).Mean, stats.Describe(c.B).Mean
	var sig bool
	var shown string
	if ci.Method == stats.MethodFieller && !math.IsNaN(ci.Low) && !math.IsNaN(ci.High) {
		// A's mean is clearly away from 0, so B/A's interval excluding 1
		// is a significant difference whatever A's sign. The change is
		// relative to |A|: (B − A)/|A|, which is B/A − 1 for a positive
		// A and 1 − B/A for a negative one (lost_count can be: iperf3
		// lowers it for packets that arrive out of order), where B/A of
		// 1.2 is B 20% further below 0, a fall.
		v.Low, v.High = ci.Low, ci.High
		v.Change = ci.Ratio - 1
		if ma < 0 {
			v.Change = 1 - ci.Ratio
		}
		sig = ci.Low > 1 || ci.High < 1
		shown = fmt.Sprintf("%s interval of B/A [%s, %s]", level, ratioText(ci.Low), ratioText(ci.High))
		if ma < 0 {
			shown += fmt.Sprintf(", A's mean %s below 0: the change is relative to its size", showMean(c, ma))
		}
	} else {
		// A's mean is zero or not clearly away from it (a count that is
		// usually 0: retransmits, errors, a lost count iperf3 lowered
		// below 0): no relative change means anything there (B − A over
		// an A of -0.8 or 0.01 is any size and, for a negative A, of the
		// wrong sign), so Welch's test at the same level decides whether
		// B differs, and a difference counts as unbounded in its
		// direction: a significant rise fails every ">" rule and passes
		// every "<" one with a negative threshold, a fall the reverse.
		_, _, v.P = stats.Welch(c.B, c.A)
		sig = v.P < 1-conf
		v.Change = unbounded(mb - ma)
		shown = fmt.Sprintf("A's mean %s is not clearly away from 0, so no relative change: B's mean %s is %s; Welch's p %.3g against %.3g",
			showMean(c, ma), showMean(c, mb), direction(mb-ma), v.P, 1-conf)
	}
	change, threshold := pctApart(v.Change, r.Change)
	beyond := r.Below && v.Change < r.Change || !r.Below && v.Change > r.Change
	switch {
	case !sig:
		v.Why = "not significant: " + shown
	case math.IsInf(v.Change, 0):
		v.Fail = beyond
		v.Why = unboundedWhy(r, v.Change > 0, shown, threshold, beyond)
	case beyond:
		v.Fail = true
		v.Why = fmt.Sprintf("change %s is significant (%s) and beyond %s", change, shown, threshold)
	default:
		v.Why = fmt.Sprintf("significant change %s (%s) within the threshold %s", change, shown, threshold)
	}
	return v
}

// unboundedWhy is the reason of a relative rule's verdict on a
// significant difference from an A not clearly away from 0: its
// percentage threshold cannot be applied there (shown as threshold), so
// a rise fails every ">" rule and no "<" one (beyond: r is failed), a
// fall the reverse. It read "change +Inf% is significant ... and beyond
// +1000.0%", as if B were past the threshold, where B/A was 4.75; an
// absolute threshold can be applied.
func unboundedWhy(r Rule, rise bool, shown, threshold string, beyond bool) string {
	what, other := "rise", "fall"
	if !rise {
		what, other = other, what
	}
	op := ">"
	if r.Below {
		op = "<"
	}
	cannot := fmt.Sprintf("the threshold %s is relative to A's mean, which is not clearly away from 0, so it cannot be applied", threshold)
	if beyond {
		return fmt.Sprintf("significant %s (%s): %s, and a significant %s fails every '%s' rule; for a threshold in the metric's unit write '%s %s N' (no %%)",
			what, shown, cannot, what, op, r.Metric, op)
	}
	return fmt.Sprintf("significant %s (%s), which passes: %s, and only a significant %s fails a '%s' rule here", what, shown, cannot, other, op)
}

// levelText is a confidence level as verdicts give it: "97.5%".
func levelText(conf float64) string { return fmt.Sprintf("%.4g%%", 100*conf) }

// unbounded is the relative change of a difference d from a baseline not
// clearly away from 0: +Inf for a rise, -Inf for a fall, 0 for none.
func unbounded(d float64) float64 {
	switch {
	case d > 0:
		return math.Inf(1)
	case d < 0:
		return math.Inf(-1)
	}
	return 0
}

// direction says which way B's mean lies from A's.
func direction(d float64) string {
	switch {
	case d > 0:
		return "higher"
	case d < 0:
		return "lower"
	}
	return "the same"
}

// showMean renders a mean as the cell's metric shows values.
func showMean(c Cell, m float64) string {
	if c.Show != nil {
		return c.Show(m)
	}
	return fmt.Sprintf("%.4g", m)
}

// noEvidence ends the reason of a cell failed for want of evidence.
const noEvidence = "a gate does not pass on no evidence"

// unjudged is the verdict on a cell without an interval to judge (ok),
// and whether it fails. A cell B gave up, lost, never ran or did not
// finish fails: a change that breaks a cell, or a run cut short before
// or within it, must not pass because it left too little to compare,
// and neither does a cell with fewer than 2 trials on a side (one trial from before the runner gave
// up, or before the run ended, at -50% was "not judged" and passed),
// nor one whose trials in B lack the metric A has there: with none it
// passed as "not judged" while one of five failed as too few, less
// evidence a better verdict.
func unjudged(c Cell) (why string, fail, ok bool) {
	if c.MissingA {
		return missingInA(c), true, true
	}
	switch {
	case c.GaveUp != "" && c.Missing:
		return fmt.Sprintf("B gave the cell up (%s): no trial of it counted there", c.GaveUp), true, true
	case c.GaveUp != "":
		return fmt.Sprintf("B gave the cell up (%s), %d trial(s) counted before: a broken cell fails however its trials compare",
			c.GaveUp, len(c.B)), true, true
	case c.Missing && c.absence() == NotReached:
		return "B did not reach it: B's study includes the cell but the run has no trial of it (it ended first); " + noEvidence, true, true
	case c.Missing && c.absence() == BudgetOut:
		return "B's budget ran out before this cell: the run has no trial of it; " + noEvidence, true, true
	case c.Missing:
		return "no value in B (every trial of the cell failed there): not measured", true, true
	case c.Unfinished:
		// Before NotMeasured: an unfinished cell fails as unfinished
		// whatever its trials hold, the metric or not.
		lacks := ""
		if c.NotMeasured {
			lacks = ", its trials without a value of " + c.Metric
		}
		return fmt.Sprintf("B unfinished (n=%d of planned %s%s): the run ended before it finished the cell, so its trials are partial "+
			"whatever they say; %s", len(c.B), c.PlannedB, lacks, noEvidence), true, true
	case c.NotMeasured:
		return fmt.Sprintf("not measured in B (its trials of the cell have no value of %s, which A has there); %s", c.Metric, noEvidence), true, true
	case c.NotMeasuredA:
		return fmt.Sprintf("not measured in A (its trials of the cell have no value of %s, which B has there): B's values have no baseline; %s",
			c.Metric, noEvidence), true, true
	case !judged(c):
		return fmt.Sprintf("not enough trials to judge: %d in A, %d in B (an interval needs 2 on each side); %s",
			len(c.A), len(c.B), noEvidence), true, true
	}
	return "", false, false
}

// missingInA is why a cell B has and A lacks fails: B's values have no
// baseline, and a gate does not pass on no evidence.
func missingInA(c Cell) string {
	switch {
	case c.GaveUpA != "":
		return fmt.Sprintf("A gave the cell up (%s): no trial of it counted there, so B's %d have no baseline; %s", c.GaveUpA, len(c.B), noEvidence)
	case c.AbsentA == NotReached:
		return "A did not reach it: A's study includes the cell but the run has no trial of it (it ended first); " + noEvidence
	case c.AbsentA == BudgetOut:
		return "A's budget ran out before this cell: the run has no trial of it; " + noEvidence
	}
	return "no value in A (every trial of the cell failed there): B's values have no baseline; " + noEvidence
}

// Failed reports whether any verdict fails the gate.
func Failed(vs []Verdict) bool {
	for _, v := range vs {
		if v.Fail {
			return true
		}
	}
	return false
}

// pctApart prints a change and the threshold it is judged against as
// signed percentages with one decimal, or as many more as it takes to
// tell them apart: a change of -5.04% under a -5% rule fails, and
// "change -5.0% ... beyond -5.0%" read as a contradiction. Equal values
// print alike (a change at the threshold is not beyond it).
func pctApart(change, threshold float64) (string, string) {
	f := func(x float64, d int) string {
		if math.IsInf(x, 0) {
			return fmt.Sprintf("%+.0f%%", x)
		}
		return fmt.Sprintf("%+.*f%%", d, 100*x)
	}
	d := 1
	for change != threshold && f(change, d) == f(threshold, d) && d < 8 {
		d++
	}
	return f(change, d), f(threshold, d)
}

// ratioText prints a bound of B/A with three decimals, or more where
// three would read 1.000 for a bound that is not 1 (an interval that
// excludes 1 would read as touching it).
func ratioText(x float64) string {
	d := 3
	for x != 1 && fmt.Sprintf("%.*f", d, x) == fmt.Sprintf("%.*f", d, 1.0) && d < 8 {
		d++
	}
	return fmt.Sprintf("%.*f", d, x)
}
