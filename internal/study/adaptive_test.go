package study

import (
	"slices"
	"strings"
	"testing"
)

const adaptiveBase = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: a
spec:
  datapaths: [flannel-vxlan]
  tunings: [baseline, rps]
  workloads:
    - tool: iperf3
  replicas: [1]
  duration: 3s
`

func TestAdaptiveFieldsParse(t *testing.T) {
	s, err := Parse("a.yaml", []byte(adaptiveBase+`  trials: {min: 3, max: 20}
  precision: {metric: bitrate, halfWidth: 2%, of: normalized}
  margin: 5%
  budget: 30m
  noise: {maxStealPct: 5, maxOutsidePct: 10, repeats: 2}
`), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	sp := s.Spec
	if sp.Trials != (Trials{Min: 3, Max: 20}) || !sp.Trials.Adaptive() {
		t.Errorf("trials %+v", sp.Trials)
	}
	if p := sp.Precision; p == nil || p.HalfWidth != 0.02 || p.Of != OfNormalized || p.Metric != "bitrate" {
		t.Errorf("precision %+v", sp.Precision)
	}
	if sp.DecisionMargin() != 0.05 || sp.Budget.Minutes() != 30 || sp.NoiseGuard().Repeats != 2 {
		t.Errorf("margin %g budget %s noise %+v", sp.DecisionMargin(), sp.Budget.Duration, sp.NoiseGuard())
	}
	// The resolved study keeps them (a resumed run reads it back).
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("study.yaml", b, Options{}, testCatalog)
	if err != nil {
		t.Fatalf("re-parse resolved study: %v\n%s", err, b)
	}
	if back.Spec.Trials != sp.Trials || *back.Spec.Margin != *sp.Margin || back.Spec.Precision.HalfWidth != 0.02 {
		t.Errorf("round trip lost fields:\n%s", b)
	}
	// A plain count stays fixed, and --set works on it.
	f, err := Parse("a.yaml", []byte(adaptiveBase+"  trials: 4\n"), Options{Set: []string{"trials={min: 2, max: 6}"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if f.Spec.Trials != (Trials{Min: 2, Max: 6}) || f.Spec.DecisionMargin() != DefaultMargin || f.Spec.NoiseGuard() != DefaultNoise {
		t.Errorf("--set trials: %+v", f.Spec.Trials)
	}
}

// A fixed count with a precision target runs the count and reports the
// target: a study's own `trials: 5` beside it, and `--set trials=5` over
// an adaptive study with a target, both parse and keep both fields.
func TestPrecisionWithFixedTrials(t *testing.T) {
	for _, c := range []struct {
		extra string
		set   []string
	}{
		{"  trials: 5\n  precision: {halfWidth: 2%, of: mean}\n", nil},
		{"  trials: {min: 3, max: 10}\n  precision: {halfWidth: 2%, of: mean}\n", []string{"trials=5"}},
	} {
		s, err := Parse("a.yaml", []byte(adaptiveBase+c.extra), Options{Set: c.set}, testCatalog)
		if err != nil {
			t.Fatalf("%q %v: %v", c.extra, c.set, err)
		}
		if s.Spec.Trials != Fixed(5) || s.Spec.Precision == nil || s.Spec.Precision.HalfWidth != 0.02 {
			t.Errorf("%q %v: trials %v precision %+v", c.extra, c.set, s.Spec.Trials, s.Spec.Precision)
		}
	}
}

func TestAdaptiveFieldsBadInput(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"  trials: {min: 0, max: 3}\n", "a.yaml:12: spec.trials: must be between 1 and"},
		{"  trials: {min: 5, max: 3}\n", "spec.trials.max: max 3 is below min 5"},
		{"  trials: {min: 2, mx: 3}\n", `a.yaml:12: spec.trials.mx: unknown trials field "mx"`},
		{"  trials: many\n", `invalid trial count "many"`},
		{"  trials: {min: 2, max: 5}\n  precision: {halfWidth: 2}\n", `invalid percentage "2"`},
		{"  trials: {min: 2, max: 5}\n  precision: {halfWidth: 0%}\n", "spec.precision.halfWidth: want a share between"},
		{"  trials: {min: 2, max: 5}\n  precision: {halfWidth: 2%, of: median}\n", `spec.precision.of: want "normalized" or "mean"`},
		{"  trials: {min: 2, max: 5}\n  budget: -1h\n", "spec.budget: must be between 0 (none) and 720h"},
		{"  trials: {min: 2, max: 5}\n  margin: 0%\n", "spec.margin: want a share between"},
		{"  trials: 3\n  noise: {maxStealPct: 0, maxOutsidePct: 10, repeats: 1}\n", "spec.noise.maxStealPct"},
		{"  trials: 3\n  noise: {maxStealPct: 5, maxOutsidePct: 10, repeats: 9}\n", "spec.noise.repeats: want 0 to 5"},
		{"  trials: 3\n  noise: {maxStealPct: 5, maxOutsidePct: 10, maxOutsidePctRoundTrips: -1, repeats: 1}\n", "spec.noise.maxOutsidePctRoundTrips"},
		{"  trials: 3\n  noise: {maxStealPct: 5, maxOutsidePct: 10, minWindowPct: 120, repeats: 1}\n", "spec.noise.minWindowPct: want a percentage in (0, 100]"},
	} {
		_, err := Parse("a.yaml", []byte(adaptiveBase+c.extra), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.extra, err, c.want)
		}
	}
}

func TestRatioReferenceBadInput(t *testing.T) {
	for _, c := range []struct{ ref, want string }{
		{"{datapath: flannel-vxlan, metric: bitrate, ratio: 1.2}", "spec.reference[0].against: a ratio is a mean over another's"},
		{"{datapath: flannel-vxlan, against: calico-vxlan, metric: bitrate}", "spec.reference[0].ratio: against and againstWorkload name the denominator"},
		{"{datapath: flannel-vxlan, against: flannel-vxlan, metric: bitrate, ratio: 1}", "a point against itself"},
		{"{against: flannel-vxlan, metric: bitrate, ratio: 1}", "spec.reference[0].datapath: against divides by another datapath"},
		{"{againstWorkload: iperf3-tcp, metric: bitrate, ratio: 1}", "spec.reference[0].workload: againstWorkload divides by another workload"},
		{"{workload: iperf3-tcp, againstWorkload: iperf3-tcp, metric: bitrate, ratio: 1}", "a point against itself"},
		{"{datapath: flannel-vxlan, against: calico-vxlan, metric: bitrate, ratio: -1}", "spec.reference[0].ratio: must be > 0"},
		// A difference (seed 004's "one background connection costs ~2
		// Gbps") names its other point as a ratio does; a range (its
		// "14 ~ 15.5 Gbps") ends above the one number it starts.
		{"{datapath: flannel-vxlan, metric: bitrate, difference: -2e9}", "spec.reference[0].against: a ratio is a mean over another's, a difference"},
		{"{workload: iperf3-tcp, againstWorkload: iperf3-tcp, metric: bitrate, difference: -2e9}", "a point against itself"},
		{"{datapath: flannel-vxlan, metric: bitrate, upTo: 15.5e9}", "spec.reference[0]: give value, normalized, ratio or difference"},
		{"{datapath: flannel-vxlan, metric: bitrate, value: 15.5e9, upTo: 14e9}", "spec.reference[0].upTo: the range's high end must be above its low end, value 1.55e+10; got 1.4e+10"},
		{"{datapath: flannel-vxlan, metric: bitrate, value: 14e9, normalized: 1, upTo: 15.5e9}", "spec.reference[0].upTo: ends the range of one number, but value and normalized are given"},
		{"{datapath: flannel-vxlan, metric: bitrate, value: 14e9, upTo: .nan}", "spec.reference[0].upTo: must be a finite number"},
	} {
		// The study has every datapath and workload the references name,
		// so each one's slip is its only problem.
		base := strings.Replace(adaptiveBase, "[flannel-vxlan]", "[flannel-vxlan, calico-vxlan]", 1)
		_, err := Parse("a.yaml", []byte(base+"  trials: 1\n  reference:\n    - "+c.ref+"\n"), Options{}, testCatalog)
		// One slip, one error: a second message for the same mistake
		// (upTo alone also got "ends the range of a number") sends the
		// reader looking for a second one.
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "more problem") {
			t.Errorf("%s: error %v, want %q alone", c.ref, err, c.want)
		}
	}
}

// TestMinimalStudyFile: a first study file of datapaths and workloads
// alone measures the machine as it is with one pod pair (tunings
// [baseline], replicas [1]); what it cannot do without, the trials and
// their length, is named with an example.
func TestMinimalStudyFile(t *testing.T) {
	const head = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: m}\nspec:\n  datapaths: [flannel-vxlan]\n  workloads: [{tool: iperf3}]\n"
	s, err := Parse("m.yaml", []byte(head+"  trials: 3\n  duration: 5s\n"), Options{}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Tunings) != 1 || s.Spec.Tunings[0].Name != "baseline" || s.Spec.Baseline != "baseline" || !slices.Equal(s.Spec.Replicas, []int{1}) {
		t.Errorf("tunings %+v (baseline %q), replicas %v: want [baseline] and [1]", s.Spec.Tunings, s.Spec.Baseline, s.Spec.Replicas)
	}
	for _, c := range []struct{ extra, want string }{
		{"  duration: 5s\n", "m.yaml:4: spec.trials: missing or 0: give the trials of each cell, a count between 1 and 1000 (e.g. 10)"},
		{"  trials: 3\n", "m.yaml:4: spec.duration: missing or 0: give the length of each trial, warm-up included (e.g. 32s"},
	} {
		if _, err := Parse("m.yaml", []byte(head+c.extra), Options{}, testCatalog); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.extra, err, c.want)
		}
	}
	// Both missing: one error, saying there is one more to fix.
	_, err = Parse("m.yaml", []byte(head), Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), "spec.trials: missing or 0") || !strings.HasSuffix(err.Error(), "(and 1 more problem: run again after fixing this one to see the next)") {
		t.Errorf("trials and duration missing: %v", err)
	}
}

// A field spec.noise leaves out keeps DefaultNoise's value, from the file
// and from --set alike; one it gives, zero included, is taken as given;
// an unknown one is named with the known ones.
func TestNoiseFieldsDefaultOneByOne(t *testing.T) {
	d := DefaultNoise
	for _, c := range []struct {
		extra string
		set   []string
		want  Noise
	}{
		{"  noise: {minWindowPct: 100}\n", nil, Noise{d.MaxStealPct, d.MaxOutsidePct, d.MaxOutsidePctRoundTrips, 100, d.Repeats}},
		{"", []string{"noise.maxStealPct=5"}, Noise{5, d.MaxOutsidePct, d.MaxOutsidePctRoundTrips, d.MinWindowPct, d.Repeats}},
		{"  noise: {maxStealPct: 5, maxOutsidePct: 10}\n", []string{"noise.repeats=0"}, Noise{5, 10, d.MaxOutsidePctRoundTrips, d.MinWindowPct, 0}},
		{"", nil, d},
	} {
		s, err := Parse("a.yaml", []byte(adaptiveBase+"  trials: 3\n"+c.extra), Options{Set: c.set}, testCatalog)
		if err != nil {
			t.Errorf("%q %v: %v", c.extra, c.set, err)
			continue
		}
		if got := s.Spec.NoiseGuard(); got != c.want {
			t.Errorf("%q %v: %+v, want %+v", c.extra, c.set, got, c.want)
		}
	}
	_, err := Parse("a.yaml", []byte(adaptiveBase+"  trials: 3\n  noise: {maxSteal: 5}\n"), Options{}, testCatalog)
	if err == nil || !strings.Contains(err.Error(), `a.yaml:13: spec.noise.maxSteal: unknown noise field`) || !strings.Contains(err.Error(), `unknown noise field "maxSteal"`) ||
		!strings.Contains(err.Error(), `"maxStealPct"`) {
		t.Errorf("unknown key: %v", err)
	}
}

// The round-trip outside-CPU bound is 5, or maxOutsidePct if that is
// lower, when spec.noise leaves it out or gives 0 (docs/statistics.md,
// "Noise guard"); and the study.yaml a run writes (Marshal), which
// --resume parses, keeps every bound of the guard.
func TestNoiseRoundTripBound(t *testing.T) {
	for _, c := range []struct {
		noise   string
		rt, out float64
	}{
		{"{maxOutsidePct: 3}", 3, 3},
		{"{maxOutsidePct: 3, maxOutsidePctRoundTrips: 0}", 3, 3},
		{"{maxOutsidePct: 10}", 5, 10},
		{"{maxOutsidePct: 10, maxOutsidePctRoundTrips: 0}", 5, 10},
		{"{maxOutsidePct: 3, maxOutsidePctRoundTrips: 8}", 8, 3},
		{"{maxStealPct: 5, minWindowPct: 0, repeats: 0}", 5, 25},
	} {
		s, err := Parse("a.yaml", []byte(adaptiveBase+"  trials: 3\n  noise: "+c.noise+"\n"), Options{}, testCatalog)
		if err != nil {
			t.Errorf("%s: %v", c.noise, err)
			continue
		}
		g := s.Spec.NoiseGuard()
		if got := g.OutsideLimit(true); got != c.rt {
			t.Errorf("%s: round-trip bound %g, want %g", c.noise, got, c.rt)
		}
		if got := g.OutsideLimit(false); got != c.out {
			t.Errorf("%s: outside bound %g, want %g", c.noise, got, c.out)
		}
		b, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("study.yaml", b, Options{}, testCatalog)
		if err != nil {
			t.Errorf("%s: marshalled study does not parse: %v", c.noise, err)
			continue
		}
		if h := again.Spec.NoiseGuard(); h != g || h.OutsideLimit(true) != g.OutsideLimit(true) || h.WindowLimit() != g.WindowLimit() {
			t.Errorf("%s: guard %+v, after Marshal and Parse %+v", c.noise, g, h)
		}
	}
}
