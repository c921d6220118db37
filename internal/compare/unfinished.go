package compare

import (
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// LeftOut names A's cells that B's study (studyB, its cells; nil:
// unknown, and nothing is named) does not include, in the order A
// measured them, as the rows name cells: they are not compared and a
// gate does not fail them (B was not meant to run them), but a reader
// of a gate that passed should know what it did not look at.
func LeftOut(a, b *results.Run, studyB []results.Cell) []string {
	if studyB == nil {
		return nil
	}
	bs := newBSide(b, studyB)
	p := newPairing(a, b, studyB)
	var out []string
	seen := map[key]bool{}
	for _, s := range a.Samples {
		k := cellKey(s.Cell, "")
		if seen[k] {
			continue
		}
		seen[k] = true
		kb := p.inB(k)
		if !bs.inStudy[kb] {
			out = append(out, p.name(k))
		}
	}
	return out
}

// Unfinished are the cells of study s that run r ended before finishing.
// A design that records stops (study.RecordsStops) writes one per cell
// as its block ends (analysis.Unfinished); a fixed design without them
// (trials: 5 over one datapath and one tuning) has a cell finished when
// it counted its trials or the runner gave it up (a trial failed every
// attempt), so one with fewer, not given up, is unfinished: a run killed
// or timed out in CI before its last cell said nothing of it.
func Unfinished(s *study.Study, r *results.Run) []results.Cell {
	if s.RecordsStops() {
		return analysis.Unfinished(s, r.Stops)
	}
	trials := map[key]map[int]bool{}
	for _, x := range r.Samples {
		k := cellKey(x.Cell, "")
		if trials[k] == nil {
			trials[k] = map[int]bool{}
		}
		trials[k][x.Trial] = true
	}
	given := gaveUpBySamples(r)
	var out []results.Cell
	for _, c := range s.Cells() {
		k := cellKey(c, "")
		if len(trials[k]) < s.Spec.Trials.Max && given[k] == "" {
			out = append(out, c)
		}
	}
	return out
}
