package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// TestSweepCaptionOneTrial: in a run of one trial per cell, where every
// cell of a sweep's table says "n=1, no CI", its caption does not promise
// "mean [95% CI] over trials"; with two trials it does.
func TestSweepCaptionOneTrial(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	var one []results.Sample
	for _, smp := range samples {
		if smp.Trial == 1 {
			one = append(one, smp)
		}
	}
	for _, c := range []struct {
		name          string
		samples       []results.Sample
		want, wantNot string
	}{
		{"one trial", one, "the value of its single trial, which has no interval (n=1, no CI)", "95% CI"},
		{"two trials", samples, "mean [95% CI] over trials", "single trial"},
	} {
		m := analysis.Build(s, c.samples)
		sec := buildWorkloads(s, m, c.samples)
		if len(sec.Sweeps) == 0 {
			t.Fatalf("%s: no sweeps", c.name)
		}
		for _, sw := range sec.Sweeps {
			if !strings.Contains(sw.Caption, c.want) || strings.Contains(sw.Caption, c.wantNot) {
				t.Errorf("%s: sweep %q caption %q, want %q and not %q", c.name, sw.Title, sw.Caption, c.want, c.wantNot)
			}
		}
		md := markdownOf(t, s, m)
		if !strings.Contains(md, c.want) {
			t.Errorf("%s: summary.md's sweep captions lack %q", c.name, c.want)
		}
	}
}

// TestSweepCaptionNoSpread: cells of several trials that all measured the
// same value have no interval either; the caption says so.
func TestSweepCaptionNoSpread(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	for i := range samples {
		for k := range samples[i].Metrics {
			samples[i].Metrics[k] = 7
		}
	}
	m := analysis.Build(s, samples)
	for _, sw := range m.Sweeps {
		got := newNumbers(m).sweepCaption(sw)
		if !strings.Contains(got, "none with an interval") {
			t.Errorf("sweep %s caption %q", sw.Workload, got)
		}
	}
}
