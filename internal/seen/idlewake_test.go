package seen

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/results"
)

// A run that measured a tuning bounding the idle states and decided it
// worse or equal against the baseline in every request/response cell
// leans against cpu-idle: the finding was given as a reason for it
// whatever the run decided. Better in some cell leans for it, both ways
// is a trade-off, and nothing decided leaves the finding a reason (slow
// wake-ups are the problem cpu-idle answers).
func TestIdleWakeLean(t *testing.T) {
	s, run := haltpollRun(t, 3)
	for trial := 1; trial <= 3; trial++ {
		for _, dp := range []string{"host", "bridge"} {
			run.Samples = append(run.Samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "rr", Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{"transactions_per_s": 18000}})
		}
	}
	stop := func(dp, wl, decision string) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "poll", Workload: wl, Replicas: 1}, Metric: "transactions_per_s",
			N: 3, Valid: 3, Decision: decision, Versus: "baseline"}
	}
	for _, c := range []struct {
		name  string
		stops []results.Stop
		lean  string
		text  string
	}{
		{"worse and equal", []results.Stop{stop("host", "rr", "worse"), stop("bridge", "rr", "equal")}, advise.LeanAgainst,
			"the run's tuning poll bounds the idle states, against baseline: worse in 1, equal in 1 of its request/response cells"},
		{"better", []results.Stop{stop("host", "rr", "better"), stop("bridge", "rr", "equal")}, advise.LeanFor, "better in 1, equal in 1"},
		{"both ways", []results.Stop{stop("host", "rr", "better"), stop("bridge", "rr", "worse")}, advise.LeanMixed, "better in 1, worse in 1"},
		{"undecided", []results.Stop{stop("host", "rr", "undecided")}, advise.LeanFor, "undecided in 1"},
		// Bulk TCP is not where idle wake-ups show: its decisions do not
		// count.
		{"bulk only", []results.Stop{stop("host", "tcp", "worse")}, advise.LeanFor, "(its decisions are in the run's report)"},
		{"none", nil, advise.LeanFor, "(its decisions are in the run's report)"},
	} {
		run.Stops = c.stops
		got := idleWake(run, s)
		if got.lean != c.lean || !strings.Contains(got.text, c.text) {
			t.Errorf("%s: lean %q, want %q; text %q lacks %q", c.name, got.lean, c.lean, got.text, c.text)
		}
	}
}
