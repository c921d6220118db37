package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Unfinished are the cells of a run whose design records a stop per cell
// (study.RecordsStops) that have none in stops.json: the run ended
// (interrupted, killed, or stopped by an error) before their block did.
// Their numbers are what it measured so far, and their decisions, made
// at the run's looks, are not final; `cnibench run --resume DIR`
// continues them. A run that stopped in its first block has no
// stops.json at all, and every cell is unfinished.
func Unfinished(s *study.Study, stops []results.Stop) []results.Cell {
	if !s.RecordsStops() {
		return nil
	}
	has := map[results.Cell]bool{}
	for _, st := range stops {
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
