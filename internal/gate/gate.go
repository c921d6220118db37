// Package gate is the regression gate of `cnibench compare --fail-if`: a
// rule such as "bitrate < -5%" fails the comparison when some cell's
// change of that metric from run A to run B is both significant (its 95%
// interval of B/A excludes 1) and beyond the threshold (the estimated
// change is below -5%). Both conditions, so that noise never fails a CI
// job (an interval covering 1 passes, however large the estimate) and a
// real but negligible change does not either (a significant -1% passes a
// -5% rule).
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

// Cell is one matched cell of a comparison: B relative to A.
type Cell struct {
	Key    string
	Metric string
	// Ratio is mean(B)/mean(A) with its 95% interval [Low, High]; NaN
	// where it is undefined (too few trials, zero baseline).
	Ratio, Low, High float64
}

// Verdict of one rule on one cell.
type Verdict struct {
	Rule Rule
	Cell Cell
	// Fail: significant and beyond the threshold.
	Fail bool
	// Why says which condition decided, for the CI log.
	Why string
}

// Check applies every rule to every cell of its metric. A rule whose
// metric no cell has is an error: a typo must not pass a gate silently.
func Check(rules []Rule, cells []Cell) ([]Verdict, error) {
	var out []Verdict
	for _, r := range rules {
		seen := false
		for _, c := range cells {
			if c.Metric != r.Metric {
				continue
			}
			seen = true
			out = append(out, judge(r, c))
		}
		if !seen {
			return nil, fmt.Errorf("--fail-if %q: no cell of both runs has metric %q", r.Text, r.Metric)
		}
	}
	return out, nil
}

func judge(r Rule, c Cell) Verdict {
	v := Verdict{Rule: r, Cell: c}
	change := c.Ratio - 1
	switch {
	case math.IsNaN(c.Ratio) || math.IsNaN(c.Low) || math.IsNaN(c.High):
		v.Why = "no interval (too few trials on a side): not judged"
	case c.Low <= 1 && c.High >= 1:
		v.Why = fmt.Sprintf("not significant: 95%% interval of B/A [%.3f, %.3f] covers 1", c.Low, c.High)
	case r.Below && change < r.Change, !r.Below && change > r.Change:
		v.Fail = true
		v.Why = fmt.Sprintf("change %+.1f%% (95%% interval %+.1f%% to %+.1f%%) is significant and beyond %+.1f%%",
			100*change, 100*(c.Low-1), 100*(c.High-1), 100*r.Change)
	default:
		v.Why = fmt.Sprintf("significant change %+.1f%% within the threshold %+.1f%%", 100*change, 100*r.Change)
	}
	return v
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
