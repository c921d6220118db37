package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// TestKnownMetricsSuggests: a metric neither run has is refused with the
// names it most likely means, several where several are equally near.
// With rtt_us among other rtt_* metrics, "rtt" suggested nothing
// (suggest.Closest takes an abbreviation only when one name begins
// with it), while docs/statistics.md shows 'did you mean "rtt_us"?'.
func TestKnownMetricsSuggests(t *testing.T) {
	have := []string{"bitrate", "rtt_mean_us", "rtt_p50_us", "rtt_p90_us", "rtt_p99_us", "rtt_us", "rtt_ms"}
	for _, tc := range []struct{ metric, want string }{
		{"rtt", `--metric "rtt": neither run has this metric (did you mean one of "rtt_us", "rtt_ms"? they have: bitrate, rtt_mean_us`},
		{"rtt_p95_us", `(did you mean one of "rtt_p90_us", "rtt_p99_us"? they have:`},
		{"bitrat", `(did you mean "bitrate"? they have:`},
		{"zzz", `neither run has this metric (they have:`},
	} {
		err := knownMetrics([]string{tc.metric}, nil, have)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.metric, err, tc.want)
		}
	}
	// The documented example: the runs' rtt metrics of a tcp study.
	err := knownMetrics([]string{"rtt"}, nil, []string{"bitrate", "retransmits", "rtt_us", "snd_cwnd_bytes", "rtt_p99_us"})
	if err == nil || !strings.Contains(err.Error(), `--metric "rtt": neither run has this metric (did you mean "rtt_us"? they have: `) {
		t.Errorf("rtt: %v", err)
	}
}

// TestCompareMetricOneRunHas: --metric M that A alone has printed "No
// cell and metric appear in both runs: cells match by tuning, ..." (the
// cells do match), and a default comparison left out a headline metric
// A alone has without a word; both say which run lacks it, and json
// gives it too. Exit 0: it is no gate.
func TestCompareMetricOneRunHas(t *testing.T) {
	with := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, "cpp_total_ns": 500}
	}
	bit := func(v float64) map[string]float64 { return map[string]float64{results.MetricBitrate: v} }
	a := writeRun(t, map[string][]map[string]float64{"baseline": {with(10e9), with(10.1e9), with(9.9e9)}})
	b := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}})
	const said = "B has no value of cpp_total_ns in any cell (A has it in 1 cell), so no row compares it"
	for _, args := range [][]string{{a, b, "--metric", "cpp_total_ns"}, {a, b}} {
		code, out, errs := compareExit(t, args...)
		if code != ExitOK || !strings.Contains(out, said) || strings.Contains(out, "No cell and metric appear in both runs") {
			t.Errorf("%q: exit %d, want %d and %q\n%s%s", args[2:], code, ExitOK, said, out, errs)
		}
	}
	code, out, errs := compareExit(t, b, a, "--metric", "cpp_total_ns", "--format", "json")
	if code != ExitOK || !strings.Contains(out, `"metrics_not_in_a": [
    {
      "metric": "cpp_total_ns",
      "cells": 1,
      "gated": false
    }
  ]`) || !strings.Contains(errs, "warning: A has no value of cpp_total_ns in any cell (B has it in 1 cell)") {
		t.Errorf("json, the other way round: exit %d\n%s%s", code, out, errs)
	}
}
