package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Unfinished are the cells of study s that run r ended (interrupted,
// killed, or stopped by an error) before finishing. Their numbers are
// what it measured so far, and their decisions, made at the run's
// looks, are not final; `cnibench run --resume DIR` continues them.
//
// A design that records a stop per cell (study.RecordsStops) writes one
// as each block ends: a cell without one is unfinished (a run that
// stopped in its first block has no stops.json at all, and every cell
// is). A fixed design without them (trials: 5 over one datapath and one
// tuning) has a cell finished when it counted its trials or the runner
// gave it up (GaveUp), so one with fewer, not given up, is unfinished:
// a run killed or timed out in CI before its last cell said nothing of
// it.
func Unfinished(s *study.Study, r *results.Run) []results.Cell {
	if s.RecordsStops() {
		has := map[results.Cell]bool{}
		for _, st := range r.Stops {
			has[st.Cell] = true
		}
		var out []results.Cell
		for _, c := range s.Cells() {
			if !has[c] {
				out = append(out, c)
			}
		}
		return out
	}
	trials := map[results.Cell]map[int]bool{}
	for _, x := range r.Samples {
		if trials[x.Cell] == nil {
			trials[x.Cell] = map[int]bool{}
		}
		trials[x.Cell][x.Trial] = true
	}
	given := GaveUp(r)
	var out []results.Cell
	for _, c := range s.Cells() {
		if len(trials[c]) < s.Spec.Trials.Max && given[c] == "" {
			out = append(out, c)
		}
	}
	return out
}

// GaveUp finds the cells whose trial the runner gave up in r's attempts
// (one whose failed attempts went past study.MaxRetries with none
// counted: the runner stops a cell there; or one with a record of its
// set-up given up, results.SetUpFailed), and says why as the runner
// does ("trial 2 failed 3 attempts; last: ...", or the record's).
func GaveUp(r *results.Run) map[results.Cell]string {
	type trialKey struct {
		cell  results.Cell
		trial int
	}
	failures, last := map[trialKey]int{}, map[trialKey]string{}
	setUp := map[trialKey]string{}
	for _, s := range r.Marked {
		t := trialKey{s.Cell, s.Trial}
		switch {
		case s.Discarded == results.SetUpFailed:
			setUp[t] = s.Error
		case s.Error != "":
			failures[t]++
			last[t] = s.Error
		}
	}
	counted := map[trialKey]bool{}
	for _, s := range r.Samples {
		counted[trialKey{s.Cell, s.Trial}] = true
	}
	why := map[trialKey]string{}
	for t, n := range failures {
		if n > study.MaxRetries {
			why[t] = results.GaveUp(t.trial, n, last[t])
		}
	}
	for t, w := range setUp {
		why[t] = w // the set-up gave the cell up whatever its attempts
	}
	// The first trial given up, as the runner stops a cell at it (a
	// resumed run may have gone on past it).
	first := map[results.Cell]trialKey{}
	for t := range why {
		if f, ok := first[t.cell]; !counted[t] && (!ok || t.trial < f.trial) {
			first[t.cell] = t
		}
	}
	out := map[results.Cell]string{}
	for c, t := range first {
		out[c] = why[t]
	}
	return out
}
