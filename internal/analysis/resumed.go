package analysis

import (
	"slices"

	"github.com/cnibench/cnibench/internal/results"
)

// A run interrupted and continued with `run --resume` has a round the
// interruption cut: trial k of one cell counted before the kill, trial k
// of another after cleanup and the resume, maybe hours later and after a
// reboot. Pairing them by trial number would claim the drift correction
// of two trials run side by side (docs/statistics.md, "Rounds cut by a
// resume"): such a pair is left out of the paired interval and its two
// values are kept in the unpaired one. The samples say which part of the
// run measured each trial (results.Sample.Part).

// parts maps each cell's counted trials to the part of the run that
// measured them; nil when every trial is of the first part (a run never
// resumed, or recorded before parts were).
type parts map[results.Cell]map[int]int

func partsOf(samples []results.Sample) parts {
	if !slices.ContainsFunc(samples, func(s results.Sample) bool { return s.Part != 0 }) {
		return nil
	}
	out := parts{}
	for _, s := range samples {
		if out[s.Cell] == nil {
			out[s.Cell] = map[int]int{}
		}
		out[s.Cell][s.Trial] = s.Part
	}
	return out
}

// apart is the set of trial numbers at which a's and b's trials are of
// different parts of the run; nil when there are none.
func (p parts) apart(a, b results.Cell) map[int]bool {
	var out map[int]bool
	for t, pa := range p[a] {
		if pb, ok := p[b][t]; ok && pa != pb {
			if out == nil {
				out = map[int]bool{}
			}
			out[t] = true
		}
	}
	return out
}

// alignedApart is aligned with the trials in apart marked split, for
// stats.CompareSplitAt to make no pair (as the controller's looks
// unpair them): each side's value of such a trial gets a position of
// its own, NaN on the other side. unpaired lists the trials so left out
// that had a value on both sides; a trial one side lacks is no pair
// anyway.
func alignedApart(a, b map[int]float64, apart map[int]bool) (x, base []float64, split []bool, unpaired []int) {
	x, base = aligned(a, b)
	if len(apart) == 0 {
		return x, base, nil, nil
	}
	trials := unionTrials(a, b)
	split = make([]bool, len(trials))
	for i, t := range trials {
		_, inA := a[t]
		_, inB := b[t]
		if split[i] = apart[t] && inA && inB; split[i] {
			unpaired = append(unpaired, t)
		}
	}
	return x, base, split, unpaired
}

// Straddle is a comparison whose paired interval left rounds out
// because their trials ran either side of a resume (Pair.Apart).
type Straddle struct {
	Cell results.Cell
	// Against is the reference's tuning or datapath name (Pair.Against).
	Against string
	Rounds  []int
}

// Straddles lists the comparisons of rows (a tuning's with its
// baseline, a datapath's with the first) that left rounds out of their
// paired interval, once per cell and reference, in the rows' order.
func Straddles(rows []Row) []Straddle {
	type key struct {
		cell    results.Cell
		against string
	}
	var out []Straddle
	seen := map[key]bool{}
	for _, r := range rows {
		for _, p := range []*Pair{r.VsBaseline, r.VsFirstDatapath} {
			if p == nil || len(p.Apart) == 0 || seen[key{r.Cell, p.Against}] {
				continue
			}
			seen[key{r.Cell, p.Against}] = true
			out = append(out, Straddle{Cell: r.Cell, Against: p.Against, Rounds: p.Apart})
		}
	}
	return out
}
