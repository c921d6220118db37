package compare

import (
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// runSide is what a run says of each cell besides its values: which
// cells have counted trials, which metrics it measured anywhere, which
// cells it tried and failed (failed attempts), which it gave up, with
// why, which the budget did not reach, and which its study includes. A
// cell of one run that the other (usually B; A when A is the run cut
// short) lacks a value of is told apart by it: every trial failed
// (missing), trials without the metric (not measured), not reached (the
// run ended first), the budget ran out before it, or not in its study
// (no row).
type runSide struct {
	counted map[key]bool
	metrics map[string]bool
	failed  map[key]bool
	gaveUp  map[key]string
	budget  map[key]bool
	// inStudy are the cells the run's study includes: its study.yaml's
	// cells where the caller resolved them, and every cell it left a trace of
	// (a trial, an attempt, a stop), which its study had however it was
	// read.
	inStudy map[key]bool
}

// newRunSide reads run b (either side); cells are its study's cells
// (nil: unknown, and then only the cells b left a trace of are known to
// be in it).
func newRunSide(b *results.Run, cells []results.Cell) runSide {
	s := runSide{counted: map[key]bool{}, metrics: map[string]bool{}, failed: map[key]bool{}, gaveUp: gaveUp(b),
		budget: map[key]bool{}, inStudy: map[key]bool{}}
	for _, c := range cells {
		s.inStudy[cellKey(c, "")] = true
	}
	for _, x := range b.Samples {
		s.counted[cellKey(x.Cell, "")] = true
		s.inStudy[cellKey(x.Cell, "")] = true
		for m := range x.Metrics {
			s.metrics[m] = true
		}
	}
	for _, x := range b.Marked {
		k := cellKey(x.Cell, "")
		s.inStudy[k] = true
		if x.Error != "" {
			s.failed[k] = true
		}
	}
	for _, st := range b.Stops {
		k := cellKey(st.Cell, "")
		s.inStudy[k] = true
		if st.Status == budgetStatus {
			s.budget[k] = true
		}
	}
	return s
}

// budgetStatus is a stop's status where the budget stopped the cell
// (adaptive.Budget); with no counted trial, its block started with the
// budget spent.
const budgetStatus = "budget"

// absence is why a run (B, or A for a cell only B has) has no value of
// a cell's metric.
type absence int

const (
	// present: B has values of the cell's metric.
	present absence = iota
	// notRun: B's study leaves the cell out (or, its study unknown, B
	// has no trace of it), or B measured the metric nowhere and no gate
	// judges it (then it is no metric of both runs); no row.
	notRun
	// missing: B tried the cell and has no counted trial of it (every
	// trial failed, or it gave the cell up).
	missing
	// notReached: B's study includes the cell and B ran no trial of it.
	notReached
	// budgetOut: B's budget ran out before the cell's block.
	budgetOut
	// notMeasured: B has counted trials of the cell, none with the
	// metric, which it measured in other cells or a gate judges.
	notMeasured
)

// gateAbsence is how the gate names a kind of absence ("" for present,
// notRun and notMeasured, which are no missing cell).
var gateAbsence = map[absence]gate.Absence{missing: gate.AllFailed, notReached: gate.NotReached, budgetOut: gate.BudgetOut}

// absent says why the run has no value of kb (its key of a cell's
// metric); gated: a gate judges the metric, so a cell the run counted
// without it is not measured even if the run measured it nowhere (a
// collector broken in every cell is no metric to leave out, but a
// regression of it the gate cannot rule out).
func (s runSide) absent(kb key, gated bool) absence {
	c := cellOf(kb)
	switch {
	case s.counted[c] && (s.metrics[kb.metric] || gated):
		return notMeasured
	case s.counted[c]:
		return notRun
	case s.failed[c] || s.gaveUp[c] != "":
		return missing
	case s.budget[c]:
		return budgetOut
	case s.inStudy[c]:
		return notReached
	}
	return notRun
}

// gaveUp is why the runner gave up each cell of run r it gave up:
// stops.json's Failed where the run wrote one (an adaptive run, or a
// fixed one with a target, a budget or cells to compare), else what its
// samples show: a trial whose failed attempts went past
// study.MaxRetries with none counted, which is when the runner gives a
// cell up. A cell's trials before that are counted and would be
// compared as if the cell were whole.
func gaveUp(r *results.Run) map[key]string {
	out := gaveUpBySamples(r)
	for _, st := range r.Stops {
		// A cell the budget did not reach ("budget spent before this
		// block") was not given up: nothing of it failed. It is absent
		// for its own reason (budgetOut), which the gate fails too.
		if st.Failed != "" && st.Status != budgetStatus {
			out[cellKey(st.Cell, "")] = st.Failed
		}
	}
	return out
}

// gaveUpBySamples is analysis.GaveUp by compare's keys.
func gaveUpBySamples(r *results.Run) map[key]string {
	out := map[key]string{}
	for c, why := range analysis.GaveUp(r) {
		out[cellKey(c, "")] = why
	}
	return out
}
