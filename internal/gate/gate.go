// Package gate is the regression gate of `cnibench compare --fail-if`: a
// rule such as "bitrate < -5%" fails the comparison when some cell's
// change of that metric from run A to run B is both significant (its
// interval of B/A, Bonferroni-corrected over the cells judged, excludes
// 1) and beyond the threshold (the estimated change is below -5%), or
// when it cannot be judged for want of evidence: one run lacks a cell
// the other has (every trial failed, the run ended or its budget ran
// out before it), B gave it up or ended before it finished it, B's
// trials of it lack the metric A has there, or a side has fewer than 2
// trials. Both conditions, so
// that noise fails a CI job in at most 5% of runs (an interval covering
// 1 passes, however large the estimate) and a real but negligible
// change does not fail it (a significant -1% passes a -5% rule); and a
// gate never passes on no evidence.
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
	// Change is the threshold as a fraction: -0.05 for "-5%"; or, for an
	// absolute rule, a difference in the metric's unit as the samples
	// record it (bit/s, us, a count): 50 for "retransmits > +50".
	Change float64
	// Absolute: the threshold has no %, and the rule judges B − A, not
	// a change relative to A. A relative change means nothing where A's
	// mean is not clearly away from 0 (a count that is usually 0), where
	// every significant rise failed every ">" rule: 'retransmits >
	// +1000%' failed on B/A of 4.75.
	Absolute bool
}

// metricName is what a rule's metric may be: one word, without spaces
// or control characters (and, as the rule is cut at its first < or >,
// without those). Metric names are the samples' keys, which collectors
// build from what they measure: daemon_<process>_<node>_rss_bytes holds
// a Kubernetes node name of up to 253 characters and its dots, so no
// length or alphabet is imposed here. Which names are right is the runs'
// to say: compare checks --fail-if's metric and --metric's alike against
// the metrics the runs have (a slip is refused there, with a
// suggestion).
var metricName = regexp.MustCompile(`^[^\s\pC<>]+$`)

// Parse reads "METRIC < -5%" or "METRIC > +10%" (spaces optional, the
// sign of the threshold optional), a change relative to A, or "METRIC >
// +50" without %, an absolute one: a difference in the metric's unit as
// the samples record it.
func Parse(text string) (Rule, error) {
	s := strings.TrimSpace(text)
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return Rule{}, fmt.Errorf("--fail-if %q: want METRIC < CHANGE%% or METRIC > CHANGE%% (e.g. 'bitrate < -5%%'), or an absolute "+
			"CHANGE without %% in the metric's unit (e.g. 'retransmits > +50')", text)
	}
	r := Rule{Text: s, Metric: strings.TrimSpace(s[:i]), Below: s[i] == '<'}
	if !metricName.MatchString(r.Metric) {
		return Rule{}, fmt.Errorf("--fail-if %q: %q is not a metric name", text, r.Metric)
	}
	num := strings.TrimSpace(s[i+1:])
	if strings.HasPrefix(num, "=") {
		return Rule{}, fmt.Errorf("--fail-if %q: use < or > (a change exactly at the threshold is not a regression)", text)
	}
	r.Absolute = !strings.HasSuffix(num, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(num, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Rule{}, fmt.Errorf("--fail-if %q: %q is not a number", text, strings.TrimSuffix(num, "%"))
	}
	if r.Absolute {
		r.Change = v
		return r, nil
	}
	if v <= -100 || v > 10000 {
		return Rule{}, fmt.Errorf("--fail-if %q: a change of %g%% is out of range (above -100%%, at most 10000%%)", text, v)
	}
	r.Change = v / 100
	return r, nil
}
