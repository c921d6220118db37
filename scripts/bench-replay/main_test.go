package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// writeRun records a fixed run of n rounds: a baseline and a tuning
// whose bitrate is gain times the baseline's, with 1% noise per trial.
func writeRun(t *testing.T, n int, gain float64) string {
	t.Helper()
	dir := t.TempDir() + "/run"
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte("kind: Study\n")); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for k := 1; k <= n; k++ {
		for _, c := range []struct {
			tuning string
			mean   float64
		}{{"baseline", 1e9}, {"rfs", gain * 1e9}} {
			s := results.Sample{
				Cell:  results.Cell{Datapath: "calico-vxlan", Tuning: c.tuning, Workload: "tcp", Replicas: 4},
				Trial: k, Start: t0, End: t0.Add(10 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: c.mean * (1 + 0.01*rng.NormFloat64())},
			}
			t0 = s.End
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReplayStopsAClearGainEarly(t *testing.T) {
	dir := writeRun(t, 20, 1.2)
	var out, errb bytes.Buffer
	if code := run([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"| calico-vxlan tcp r=4 | rfs | better 1.19",
		"n=20 | better 1.18",
		"n=3, target | yes |",
		// 20 trials of each cell against 3: 400 s of trials against 60 s.
		"same decision in 1 of 1 cells (0 more compatible); machine time of the trials: fixed 6m40s, adaptive replay 1m0s (0.15 of fixed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestReplayErrors(t *testing.T) {
	// identical, 0.1% margin: the adaptive design wants more than 5 rounds
	short := writeRun(t, 5, 1.0)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-max", "20", "-margin", "0.001", short}, 1, "calico-vxlan tcp r=4: baseline has no trial 6: the fixed run must have at least -max trials"},
		{[]string{}, 2, "usage: bench-replay"},
		{[]string{"-min", "0", short}, 2, "trials.min 0"},
		{[]string{t.TempDir() + "/none"}, 2, "none"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

// A small real loss is "equal, significant" to one design and "worse" to
// the other: compatible, not the same and not a contradiction.
func TestAgree(t *testing.T) {
	cmp := func(v stats.Verdict, sig bool, ratio float64) stats.Comparison {
		c := stats.Comparison{Decision: stats.Decision{Verdict: v, Significant: sig}}
		c.Chosen.Ratio = ratio
		return c
	}
	eqLow, eqLowNS := cmp(stats.Equal, true, 0.97), cmp(stats.Equal, false, 0.99)
	worse, better, undecided := cmp(stats.Worse, true, 0.95), cmp(stats.Better, true, 1.05), cmp(stats.Undecided, false, 0.98)
	for _, tc := range []struct {
		fixed, ada stats.Comparison
		dir        stats.Direction
		want       string
	}{
		{worse, worse, stats.HigherIsBetter, same},
		{eqLow, worse, stats.HigherIsBetter, compatible},
		{worse, eqLow, stats.HigherIsBetter, compatible},
		{eqLow, better, stats.HigherIsBetter, differ},
		{eqLow, better, stats.LowerIsBetter, compatible}, // lower latency is better
		{eqLowNS, worse, stats.HigherIsBetter, differ},
		{worse, undecided, stats.HigherIsBetter, differ},
	} {
		if got := agree(tc.fixed, &tc.ada, tc.dir); got != tc.want {
			t.Errorf("fixed %+v, adaptive %+v (direction %d): %q, want %q", tc.fixed.Decision, tc.ada.Decision, tc.dir, got, tc.want)
		}
	}
	if got := agree(worse, nil, stats.HigherIsBetter); got != differ {
		t.Errorf("no adaptive look: %q", got)
	}
}
