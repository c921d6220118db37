package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A held cell the budget stopped before its hold (stops.json's held)
// had no look, so no estimate: the end of the run says it needs a larger
// budget, priced with the holds and the baseline's trials beside them,
// not that it needs more than 1000 trials, nor nothing at all. The
// case: rps-rfs --quick on 2 cores, rps and rps+ at 1 pair held to 8
// and stopped by the budget at 6, every other cell decided (A), or rfs
// at 1 pair undecided with an estimate too (B).
func TestNextStepOfHeldCells(t *testing.T) {
	cell := func(tuning string, r int) results.Cell {
		return results.Cell{Datapath: "bridge", Workload: "tcp", Tuning: tuning, Replicas: r}
	}
	decided := func(tuning string, r, n int) results.Stop {
		return results.Stop{Cell: cell(tuning, r), Status: "target", N: n, Look: n, TrialSeconds: 5, Decision: "better", Versus: "baseline"}
	}
	held := func(tuning string) results.Stop {
		return results.Stop{Cell: cell(tuning, 1), Status: "budget", N: 6, TrialSeconds: 5, Decision: "undecided", Versus: "baseline", Held: 8}
	}
	stops := []results.Stop{
		{Cell: cell("baseline", 1), Status: "budget", N: 6, TrialSeconds: 5},
		held("rps"), held("rps+"), decided("rfs", 1, 5), decided("rfs+", 1, 5),
		{Cell: cell("baseline", 4), Status: "target", N: 5, TrialSeconds: 5},
		decided("rps", 4, 3), decided("rps+", 4, 3), decided("rfs", 4, 5), decided("rfs+", 4, 5),
	}
	s := &study.Study{}
	s.Spec.Trials, s.Spec.Budget.Duration = study.Trials{Min: 3, Max: 10}, 4*time.Minute
	o := &results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--quick"}}

	// A: the budget's line, with the minimum of 3 x 8 + 7 x 3 = 45
	// trials of 5 s.
	want := "the budget of 4m ran out before 3 cells had their minimum (8 trials for a cell held before a decision, as its trials may " +
		"take a few distinct values, and for the cell it is compared with; 3 for the others), so more trials alone will not decide them: " +
		"the minimum of all 10 cells takes about 3m45s at this run's 5s a trial; rerun with --budget 5m or more, or with fewer cells"
	if got := BudgetLine(stops, s, 0); got != want {
		t.Errorf("A: budget line\n%s\nwant\n%s", got, want)
	}
	if got := BudgetCommand(stops, s, o, 0); got != "cnibench run rps-rfs --quick --budget 5m" {
		t.Errorf("A: budget command %q", got)
	}
	if RerunLine(stops, s, Disturbed{}) != "" {
		t.Error("A: a rerun line without an estimate")
	}
	var steps []NextStep
	for _, n := range Next(stops, s, o, 0, nil, Disturbed{}) {
		if n.Line != "" {
			steps = append(steps, n)
		}
	}
	if len(steps) != 1 || steps[0].Line != want || steps[0].Command == "" {
		t.Errorf("A: next steps %q, want the budget's", steps)
	}

	// B: rfs at 1 pair undecided with an estimate of 12.
	b := append([]results.Stop(nil), stops...)
	b[3].Status, b[3].Decision, b[3].ToDecide = "budget", "undecided", 12
	got := RerunLine(b, s, Disturbed{})
	if !strings.Contains(got, "12 for the 1 with an estimate (about ") ||
		!strings.Contains(got, "; 2 held to 8 trials, stopped by the budget at 6 before any look: they need a larger --budget, not a larger maximum)") ||
		strings.Contains(got, "up to 1000") {
		t.Errorf("B: rerun line %s", got)
	}
	// One held cell among them, and an unheld one the budget stopped
	// before trials.min beside an estimate-less futile one.
	one := append([]results.Stop(nil), b...)
	one[2] = decided("rps+", 1, 8)
	if got := RerunLine(one, s, Disturbed{}); !strings.Contains(got, "; 1 held to 8 trials, stopped by the budget at 6 before any look: it needs a larger --budget") {
		t.Errorf("one held cell: %s", got)
	}
	mixed := append([]results.Stop(nil), b...)
	mixed[2].Held, mixed[2].N = 0, 2
	mixed[4].Status, mixed[4].Decision = "futile", "undecided"
	if got := RerunLine(mixed, s, Disturbed{}); !strings.Contains(got, "; 1 without one up to 1000 trials; 2 stopped by the budget at 2-6 trials before any look (the first at 3-8): they need") {
		t.Errorf("mixed: %s", got)
	}
}
