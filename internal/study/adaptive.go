package study

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Trials is the number of trials per cell: a fixed count (`trials: 20`)
// or bounds for adaptive repetitions (`trials: {min: 3, max: 20}`), where
// the runner adds interleaved rounds to a cell until its precision target
// or decision is reached, its maximum, or the budget (docs/statistics.md,
// "Adaptive stopping").
type Trials struct {
	Min int `yaml:"min"`
	Max int `yaml:"max"`
}

// Fixed is a fixed count of n trials.
func Fixed(n int) Trials { return Trials{Min: n, Max: n} }

// Adaptive reports whether the count is a range.
func (t Trials) Adaptive() bool { return t.Min < t.Max }

// RecordsStops reports whether a run of the study writes a stop per cell
// to stops.json as each block of cells ends: an adaptive design, or a
// fixed one with a budget, a precision target or cells to compare (the
// report says whether the count met the target, and the run's end lists
// the decisions). A cell of such a run without a stop was not finished.
func (s *Study) RecordsStops() bool {
	sp := &s.Spec
	return sp.Trials.Adaptive() || sp.Budget.Duration > 0 || sp.Precision != nil || s.Compares() != ""
}

func (t Trials) String() string {
	if t.Adaptive() {
		return fmt.Sprintf("%d-%d", t.Min, t.Max)
	}
	return strconv.Itoa(t.Max)
}

// UnmarshalYAML reads a count or a {min, max} mapping.
func (t *Trials) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := strconv.Atoi(n.Value)
		if err != nil && n.ShortTag() == "!!float" {
			// As min and max read one: `trials: 2.0` is 2, and 2.5, read
			// as YAML cuts it, is refused for its fraction at its line
			// (misreadNumber) as in every other whole-number field.
			err = n.Decode(&v)
		}
		if err != nil {
			return atNode(n, "invalid trial count %q (a number, or {min: 3, max: 20})", n.Value)
		}
		*t = Fixed(v)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return atNode(n, "trials is a number or a mapping {min, max}")
	}
	// KnownFields does not reach into a custom unmarshaler.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value != "min" && k.Value != "max" {
			return atNode(k, "%s", unknownKey("trials", "Trials", k.Value, []string{"min", "max"}))
		}
	}
	type plain Trials
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*t = Trials(p)
	return nil
}

// MarshalYAML writes a fixed count as a number.
func (t Trials) MarshalYAML() (any, error) {
	if !t.Adaptive() {
		return t.Max, nil
	}
	type plain Trials
	return plain(t), nil
}

// Percent is a share written as a percentage ("2%"); it holds 0.02.
type Percent float64

// UnmarshalYAML reads "2%" or "0.5%".
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if n.Kind != yaml.ScalarNode || !strings.HasSuffix(s, "%") || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return atNode(n, "invalid percentage %q (write e.g. 2%%)", n.Value)
	}
	*p = Percent(v / 100)
	return nil
}

// MarshalYAML writes the share back as a percentage.
func (p Percent) MarshalYAML() (any, error) {
	return strconv.FormatFloat(float64(p)*100, 'g', -1, 64) + "%", nil
}

// Precision is a study's precision target: the relative half-width of
// the 95% interval of one metric, either of the cell's mean or of its
// ratio to the baseline tuning (normalized). With a range of trials a
// cell stops once it meets the target; with a fixed count (a study's
// paper profile, `--set trials=5`) the count stands and the report says
// per cell whether that count met it: a fixed count is not an error, so
// that a built-in study's target does not have to be unset by hand
// before every fixed run.
type Precision struct {
	// Metric is a metric of the cells' samples ("bitrate"); empty means
	// each workload's first headline metric.
	Metric    string  `yaml:"metric,omitempty"`
	HalfWidth Percent `yaml:"halfWidth"`
	// Of is "normalized" (default when the study has a baseline and more
	// than one tuning) or "mean".
	Of string `yaml:"of,omitempty"`
}

// Precision targets' Of values.
const (
	OfNormalized = "normalized"
	OfMean       = "mean"
)

// Noise is the noise guard's thresholds: a trial during which the
// machine was used by others beyond them is marked disturbed and, up to
// Repeats times per trial, run again (docs/statistics.md, "Noise guard").
type Noise struct {
	// MaxStealPct is the largest mean steal time, in percent of the
	// machine's CPU time over the measured window.
	MaxStealPct float64 `yaml:"maxStealPct"`
	// MaxOutsidePct is the largest CPU time of processes outside the run
	// (user processes in the host's network namespace other than
	// cnibench), in percent of the machine's CPU time.
	MaxOutsidePct float64 `yaml:"maxOutsidePct"`
	// MaxOutsidePctRoundTrips is the same bound for the trials of a
	// workload whose rate is set by round trips (spec.Tool.RoundTrips):
	// there outside work errs the other way, keeping cores from idling
	// so that each round trip is shorter. On 2026-11-30 a nic-modes
	// trial of sockperf between two pods of one node ran 40,009
	// transactions per second beside 17% outside CPU (a compiler), its
	// next two 18,343 and 18,303 on a quiet machine: 25% let it count.
	// 0 (unset) is DefaultNoise's, or MaxOutsidePct if that is lower;
	// UnmarshalYAML resolves it so, so that the study.yaml a run writes
	// (and --resume reads) holds the bound the run used.
	MaxOutsidePctRoundTrips float64 `yaml:"maxOutsidePctRoundTrips,omitempty" zero:"ok"`
	// MinWindowPct is the smallest share of the planned measured window
	// (warm-up end to the duration's end) the collectors must cover: on
	// a slow or overloaded machine they can take seconds to start, and a
	// short window's counters miss most of the traffic. On 2026-12-02 an
	// emulated guest's flannel-backends trials of 3 s (1 s warm-up) had
	// their collectors started only 2-5 s after the warm-up, past the
	// window's end, and read 0-124 packets through the netem. 0 (unset)
	// is DefaultNoise's.
	MinWindowPct float64 `yaml:"minWindowPct,omitempty" zero:"ok"`
	// Repeats bounds the repetitions of one disturbed trial; 0 marks
	// disturbed trials without repeating them.
	Repeats int `yaml:"repeats"`
}

// DefaultNoise is the guard a study without spec.noise gets, and the
// value of each field spec.noise leaves out.
var DefaultNoise = Noise{MaxStealPct: 10, MaxOutsidePct: 25, MaxOutsidePctRoundTrips: 5, MinWindowPct: 80, Repeats: 1}

var noiseKeys = []string{"maxStealPct", "maxOutsidePct", "maxOutsidePctRoundTrips", "minWindowPct", "repeats"}

// UnmarshalYAML reads spec.noise over DefaultNoise: a field left out
// keeps its default. Without it `noise: {minWindowPct: 50}`, or
// `--set noise.maxStealPct=5` on a study without spec.noise, was refused
// for a steal or outside bound of 0, and a block without repeats ran
// none.
func (g *Noise) UnmarshalYAML(n *yaml.Node) error {
	// The decoder's KnownFields does not reach into a custom unmarshaler.
	if err := checkKeys(n, "noise", "Noise", noiseKeys); err != nil {
		return err
	}
	type plain Noise
	p := plain(DefaultNoise)
	// The round-trip bound left out (or 0) is DefaultNoise's or
	// maxOutsidePct if that is lower (OutsideLimit): starting from
	// DefaultNoise's 5 made `{maxOutsidePct: 3}` guard round trips at 5.
	p.MaxOutsidePctRoundTrips = 0
	if err := n.Decode(&p); err != nil {
		return err
	}
	*g = Noise(p)
	if g.MaxOutsidePctRoundTrips == 0 && g.MaxOutsidePct > 0 && g.MaxOutsidePct <= 100 {
		g.MaxOutsidePctRoundTrips = g.OutsideLimit(true)
	}
	// So is a window share of 0 (WindowLimit): Marshal leaves a 0 out.
	if g.MinWindowPct == 0 {
		g.MinWindowPct = g.WindowLimit()
	}
	return nil
}

// WindowLimit is the guard's bound on the collectors' share of the
// measured window: MinWindowPct, DefaultNoise's when unset.
func (n Noise) WindowLimit() float64 {
	if n.MinWindowPct > 0 {
		return n.MinWindowPct
	}
	return DefaultNoise.MinWindowPct
}

// OutsideLimit is the outside-CPU bound of a workload's trials: the
// round-trip bound for a workload whose rate is set by round trips.
func (n Noise) OutsideLimit(roundTrips bool) float64 {
	if !roundTrips {
		return n.MaxOutsidePct
	}
	if n.MaxOutsidePctRoundTrips > 0 {
		return n.MaxOutsidePctRoundTrips
	}
	return min(DefaultNoise.MaxOutsidePctRoundTrips, n.MaxOutsidePct)
}

// NoiseGuard is the study's noise guard, DefaultNoise when it gives none.
func (sp *Spec) NoiseGuard() Noise {
	if sp.Noise != nil {
		return *sp.Noise
	}
	return DefaultNoise
}

// DefaultMargin is the equivalence margin of decisions when the study
// gives none: a tuning within ±2% of the baseline is "equal".
const DefaultMargin = 0.02

// DecisionMargin is spec.margin, DefaultMargin when the study gives none.
func (sp *Spec) DecisionMargin() float64 {
	if sp.Margin != nil {
		return float64(*sp.Margin)
	}
	return DefaultMargin
}

// MaxBudget bounds spec.budget (and --budget): a budget only caps the
// run, so one above the planned run time's own bound (MaxPlanned) caps
// nothing, and 2562047h would overflow the runner's deadlines.
const MaxBudget = MaxPlanned

// MaxRetries bounds the attempts after a failed trial (a workload that
// crashed, a collector that timed out): the attempt is recorded with its
// error and the trial run again, up to this many times.
const MaxRetries = 2

// validateAdaptive checks spec.trials, spec.precision, spec.margin,
// spec.budget and spec.noise.
func validateAdaptive(sp *Spec, bad badFunc) {
	t := sp.Trials
	switch {
	case t.Min == 0 && t.Max == 0:
		bad("spec.trials", "missing or 0: give the trials of each cell, a count between 1 and %d (e.g. 10) or {min: 3, max: 20} to repeat a cell until it is decided", MaxTrials)
	case t.Min < 1:
		bad("spec.trials", "must be between 1 and %d, got %d", MaxTrials, t.Min)
	case t.Max < t.Min:
		bad("spec.trials.max", "max %d is below min %d", t.Max, t.Min)
	}
	if p := sp.Precision; p != nil {
		if !(p.HalfWidth > 0) || p.HalfWidth >= 1 {
			bad("spec.precision.halfWidth", "want a share between 0%% and 100%%, such as 2%%; got %g%%", float64(p.HalfWidth)*100)
		}
		switch p.Of {
		case OfNormalized:
			if sp.Baseline == "" || len(sp.Tunings) < 2 {
				bad("spec.precision.of", "normalized needs a baseline tuning and another tuning to compare with it; use mean")
			}
		case OfMean, "":
		default:
			bad("spec.precision.of", "want %q or %q, got %q", OfNormalized, OfMean, p.Of)
		}
		if p.Metric != "" && !nameRE.MatchString(p.Metric) {
			bad("spec.precision.metric", "invalid metric name %q", p.Metric)
		}
	}
	if sp.Margin != nil && (!(*sp.Margin > 0) || *sp.Margin >= 1) {
		bad("spec.margin", "want a share between 0%% and 100%%, such as 2%%; got %g%%", float64(*sp.Margin)*100)
	}
	if b := sp.Budget.Duration; b < 0 || b > MaxBudget {
		bad("spec.budget", "must be between 0 (none) and %s, got %s", ShortDuration(MaxBudget), b)
	}
	if n := sp.Noise; n != nil {
		// Written as "not inside" so that NaN (YAML .nan), which fails
		// every comparison, is refused too.
		if !(n.MaxStealPct > 0 && n.MaxStealPct <= 100) {
			bad("spec.noise.maxStealPct", "want a percentage in (0, 100], got %g", n.MaxStealPct)
		}
		if !(n.MaxOutsidePct > 0 && n.MaxOutsidePct <= 100) {
			bad("spec.noise.maxOutsidePct", "want a percentage in (0, 100], got %g", n.MaxOutsidePct)
		}
		if !(n.MaxOutsidePctRoundTrips >= 0 && n.MaxOutsidePctRoundTrips <= 100) {
			bad("spec.noise.maxOutsidePctRoundTrips", "want a percentage in (0, 100], or 0 for the default, got %g", n.MaxOutsidePctRoundTrips)
		}
		if !(n.MinWindowPct >= 0 && n.MinWindowPct <= 100) {
			bad("spec.noise.minWindowPct", "want a percentage in (0, 100], or 0 for the default, got %g", n.MinWindowPct)
		}
		if n.Repeats < 0 || n.Repeats > 5 {
			bad("spec.noise.repeats", "want 0 to 5, got %d", n.Repeats)
		}
	}
}

// validatePrecisionMetric checks spec.precision.metric against what the
// study's trials can carry: a headline metric of some workload's tool for
// its protocol (spec.Tool.Headline, in the catalog), or a collector's
// (Catalog.CollectorMetrics, read as the references read them:
// collectorMetric, so "cpp_*_cycles (sampling cycles)", braces and
// upper-case placeholders match what the collectors write). A typo
// ("bitrat") matches neither and is refused here: every cell would lack
// it and silently run to max. A workload that does not report a metric
// another one does (sockperf beside iperf3 under bitrate) runs its cells
// to max, which the report says per cell. A tool the catalog does not
// know is reported by validateWorkloads.
func validatePrecisionMetric(sp *Spec, cat Catalog, bad badFunc) {
	p := sp.Precision
	if p == nil || p.Metric == "" {
		return
	}
	var known []string
	for _, w := range sp.Workloads {
		t, ok := cat.Tool(w.Tool)
		if !ok {
			return
		}
		for _, m := range t.HeadlineFor(w.Protocol) {
			if m == p.Metric {
				return
			}
			if !contains(known, m) {
				known = append(known, m)
			}
		}
	}
	if collectorMetric(cat, p.Metric) {
		return
	}
	if len(known) == 0 {
		return
	}
	bad("spec.precision.metric", "%q is not a metric of this study's workloads (%stheir headline metrics: %s; or a collector's, docs/workloads.md)",
		p.Metric, suggest.Hint(p.Metric, known), strings.Join(known, ", "))
}
