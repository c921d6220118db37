// Package gate is the regression gate of `cnibench compare --fail-if`: a
// rule such as "bitrate < -5%" fails the comparison when some cell's
// change of that metric from run A to run B is both significant (its
// interval of B/A, Bonferroni-corrected over the cells judged, excludes
// 1) and beyond the threshold (the estimated change is below -5%), or
// when B lacks a cell A has or gave it up. Both conditions, so that noise fails a CI
// job in at most 5% of runs (an interval covering 1 passes, however
// large the estimate) and a real but negligible change does not fail it
// (a significant -1% passes a -5% rule).
//
// Rules are parsed from the user's text here and nowhere else; they never
// reach a shell.
package gate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/stats"
)

// Rule is one --fail-if condition.
type Rule struct {
	// Text is the rule as the user wrote it, for messages.
	Text string
	// Metric is the metric's name in the runs' samples (bitrate, rtt_us).
	Metric string
	// Below is true for "<" (a fall fails), false for ">" (a rise fails).
	Below bool
	// Change is the threshold as a fraction: -0.05 for "-5%".
	Change float64
}

// metricName is what a metric's name may hold (the samples' keys).
var metricName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// Parse reads "METRIC < -5%" or "METRIC > +10%" (spaces optional, the
// sign of the threshold optional, the % required: changes are relative).
func Parse(text string) (Rule, error) {
	s := strings.TrimSpace(text)
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return Rule{}, fmt.Errorf("--fail-if %q: want METRIC < CHANGE%% or METRIC > CHANGE%% (e.g. 'bitrate < -5%%')", text)
	}
	r := Rule{Text: s, Metric: strings.TrimSpace(s[:i]), Below: s[i] == '<'}
	if !metricName.MatchString(r.Metric) {
		return Rule{}, fmt.Errorf("--fail-if %q: %q is not a metric name", text, r.Metric)
	}
	num := strings.TrimSpace(s[i+1:])
	if strings.HasPrefix(num, "=") {
		return Rule{}, fmt.Errorf("--fail-if %q: use < or > (a change exactly at the threshold is not a regression)", text)
	}
	if !strings.HasSuffix(num, "%") {
		return Rule{}, fmt.Errorf("--fail-if %q: the threshold is a relative change and needs %% (e.g. -5%%)", text)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(num, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Rule{}, fmt.Errorf("--fail-if %q: %q is not a number", text, strings.TrimSuffix(num, "%"))
	}
	if v <= -100 || v > 10000 {
		return Rule{}, fmt.Errorf("--fail-if %q: a change of %g%% is out of range (above -100%%, at most 10000%%)", text, v)
	}
	r.Change = v / 100
	return r, nil
}

// Cell is one matched cell of a comparison: its finite values in run A
// and in run B.
type Cell struct {
	Key    string
	Metric string
	A, B   []float64
	// Missing: A has the cell and B none of its values (B tried it and
	// every trial failed).
	Missing bool
	// NotMeasured: B's trials of the cell have no value of the metric
	// (B measured it in other cells): not judged, and no cell of the
	// metric for Check's "no cell has it".
	NotMeasured bool
	// GaveUp is why B's runner gave the cell up ("" when it did not):
	// the cell fails whatever trials it left before.
	GaveUp string
	// Show renders a value of the metric with its unit for messages
	// ("12.06 Gbit/s"); nil: the plain number.
	Show func(float64) string
}

// Verdict of one rule on one cell.
type Verdict struct {
	Rule Rule
	Cell Cell
	// Fail: significant and beyond the threshold, or missing in B or
	// given up there.
	Fail bool
	// Why says which condition decided, for the CI log.
	Why string
}

// Check applies every rule to every cell of its metric. A rule whose
// metric no cell has is an error: a typo must not pass a gate silently.
//
// The cells are judged together, so the intervals are Bonferroni's: at
// confidence 1 − 0.05/m for m judged cells (over all rules). At 95% each,
// 20 cells of pure noise would fail a gate in about two runs of three;
// this way noise fails it in at most 5% of runs however many cells the
// study has. A cell in A that B lacks or gave up fails: a change that
// breaks a cell must not pass because it left too little to compare. A
// cell whose trials in B lack the metric is no cell of it here.
func Check(rules []Rule, cells []Cell) ([]Verdict, error) {
	m := 0
	for _, r := range rules {
		seen := false
		for _, c := range cells {
			if c.Metric == r.Metric && !c.NotMeasured {
				seen = true
				if judged(c) {
					m++
				}
			}
		}
		if !seen {
			return nil, fmt.Errorf("--fail-if %q: no cell of both runs has metric %q", r.Text, r.Metric)
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
// and B neither lost nor gave it up).
func judged(c Cell) bool {
	return !c.Missing && !c.NotMeasured && c.GaveUp == "" && len(c.A) >= 2 && len(c.B) >= 2
}

func judge(r Rule, c Cell, conf float64) Verdict {
	if why, fail, ok := unjudged(c); ok {
		return Verdict{Rule: r, Cell: c, Fail: fail, Why: why}
	}
	v := Verdict{Rule: r, Cell: c}
	ci := stats.RatioAt(c.B, c.A, conf)
	level := fmt.Sprintf("%.4g%%", 100*conf)
	var change float64
	var sig bool
	var shown string
	if ci.Method == stats.MethodFieller && !math.IsNaN(ci.Low) && !math.IsNaN(ci.High) {
		change = ci.Ratio - 1
		sig = ci.Low > 1 || ci.High < 1
		shown = fmt.Sprintf("%s interval of B/A [%.3f, %.3f]", level, ci.Low, ci.High)
	} else {
		// A's mean is zero or not clearly away from it (a count that is
		// usually 0: retransmits, errors): no bounded ratio interval, so
		// the change is judged by Welch's test at the same level, and a
		// rise from exactly 0 is an unbounded relative change.
		ma, mb := stats.Describe(c.A).Mean, stats.Describe(c.B).Mean
		_, _, p := stats.Welch(c.B, c.A)
		sig = p < 1-conf
		change = math.Inf(1)
		if ma != 0 {
			change = mb/ma - 1
		} else if mb < ma {
			change = math.Inf(-1)
		} else if mb == ma {
			change = 0
		}
		mean := fmt.Sprintf("%.4g", ma)
		if c.Show != nil {
			mean = c.Show(ma)
		}
		shown = fmt.Sprintf("A's mean %s is not clearly away from 0, so no ratio interval; Welch's p %.3g against %.3g", mean, p, 1-conf)
	}
	switch {
	case !sig:
		v.Why = "not significant: " + shown
	case r.Below && change < r.Change, !r.Below && change > r.Change:
		v.Fail = true
		v.Why = fmt.Sprintf("change %+.1f%% is significant (%s) and beyond %+.1f%%", 100*change, shown, 100*r.Change)
	default:
		v.Why = fmt.Sprintf("significant change %+.1f%% (%s) within the threshold %+.1f%%", 100*change, shown, 100*r.Change)
	}
	return v
}

// unjudged is the verdict on a cell without an interval to judge (ok),
// and whether it fails. A cell B gave up or lost fails: a change that
// breaks a cell must not pass because it left too little to compare,
// even one trial from before the runner gave up (its change, however
// large, would otherwise be "not judged"). A metric B's trials lack and
// a side of one trial are not judged.
func unjudged(c Cell) (why string, fail, ok bool) {
	switch {
	case c.GaveUp != "" && c.Missing:
		return fmt.Sprintf("B gave the cell up (%s): no trial of it counted there", c.GaveUp), true, true
	case c.GaveUp != "":
		return fmt.Sprintf("B gave the cell up (%s), %d trial(s) counted before: a broken cell fails however its trials compare",
			c.GaveUp, len(c.B)), true, true
	case c.Missing:
		return "no value in B (every trial of the cell failed there): not measured", true, true
	case c.NotMeasured:
		return fmt.Sprintf("not measured in B (its trials of the cell have no value of %s): not judged", c.Metric), false, true
	case !judged(c):
		return fmt.Sprintf("%d trial(s) in A, %d in B: no interval with fewer than 2 on a side, not judged", len(c.A), len(c.B)), false, true
	}
	return "", false, false
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
