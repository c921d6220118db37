package compare

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// bSide is what run B says of each cell besides its values: which cells
// have counted trials, which metrics it measured anywhere, which cells
// it tried (failed or repeated attempts, or a stop in stops.json) and
// which it gave up, with why. A cell of A that B lacks a value of is
// told apart by it: every trial failed (missing), trials without the
// metric (not measured), or never run (no row).
type bSide struct {
	counted map[key]bool
	metrics map[string]bool
	tried   map[key]bool
	gaveUp  map[key]string
}

func newBSide(b *results.Run) bSide {
	s := bSide{counted: map[key]bool{}, metrics: map[string]bool{}, tried: map[key]bool{}, gaveUp: gaveUp(b)}
	for _, x := range b.Samples {
		s.counted[cellKey(x.Cell, "")] = true
		for m := range x.Metrics {
			s.metrics[m] = true
		}
	}
	for _, x := range b.Marked {
		s.tried[cellKey(x.Cell, "")] = true
	}
	for _, st := range b.Stops {
		s.tried[cellKey(st.Cell, "")] = true
	}
	return s
}

// absence is why B has no value of a cell's metric.
type absence int

const (
	// present: B has values of the cell's metric.
	present absence = iota
	// notRun: B never ran the cell, or measured the metric nowhere
	// (then it is no metric of both runs); no row.
	notRun
	// missing: B tried the cell and has no counted trial of it.
	missing
	// notMeasured: B has counted trials of the cell, none with the
	// metric, which it measured in other cells.
	notMeasured
)

// absent says why B has no value of kb (B's key of a cell's metric).
func (s bSide) absent(kb key) absence {
	c := cellOf(kb)
	switch {
	case s.counted[c] && s.metrics[kb.metric]:
		return notMeasured
	case s.counted[c]:
		return notRun
	case s.tried[c] || s.gaveUp[c] != "":
		return missing
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
		// block") was not given up: nothing of it failed, and the gate
		// says it was not run rather than failing the change for it.
		if st.Failed != "" && st.Status != "budget" {
			out[cellKey(st.Cell, "")] = st.Failed
		}
	}
	return out
}

// gaveUpBySamples finds the trials the runner gave up in r's attempts,
// and says why as the runner does ("trial 2 failed 3 attempts; last:
// ...").
func gaveUpBySamples(r *results.Run) map[key]string {
	type trialKey struct {
		cell  key
		trial int
	}
	failures, last := map[trialKey]int{}, map[trialKey]string{}
	for _, s := range r.Marked {
		if s.Error != "" {
			t := trialKey{cellKey(s.Cell, ""), s.Trial}
			failures[t]++
			last[t] = s.Error
		}
	}
	counted := map[trialKey]bool{}
	for _, s := range r.Samples {
		counted[trialKey{cellKey(s.Cell, ""), s.Trial}] = true
	}
	// The first trial given up, as the runner stops a cell at it (a
	// resumed run may have gone on past it).
	first := map[key]trialKey{}
	for t, n := range failures {
		if f, ok := first[t.cell]; n > study.MaxRetries && !counted[t] && (!ok || t.trial < f.trial) {
			first[t.cell] = t
		}
	}
	out := map[key]string{}
	for c, t := range first {
		out[c] = results.GaveUp(t.trial, failures[t], last[t])
	}
	return out
}
