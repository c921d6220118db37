package study

import "time"

// Planned is what a study asks of the machine before it runs: its cells
// and the machine time of their trials (each trial's duration and
// cooldown, and a loss-ceiling search's probes), from the fewest trials a
// cell may stop at (trials.min) to the most (trials.max). Set-up (nodes
// and pods per datapath and replica count) is not counted. Counted in
// float64, so that no product of bounded factors overflows; validation
// bounds Cells and MaxSeconds (checkPlanned), a dry run prints them.
type Planned struct {
	// Cells: datapaths x replica counts x workload variants x tunings x
	// impairments. PerVariant is the cells of one workload variant.
	Cells, PerVariant float64
	// MinSeconds and MaxSeconds are the machine time in trials at
	// trials.min and trials.max per cell; SearchSeconds is the part of
	// MaxSeconds the loss-ceiling searches' probes take.
	MinSeconds, MaxSeconds, SearchSeconds float64
}

// Plan counts the study's cells and the machine time of their trials.
func (s *Study) Plan() Planned {
	sp := &s.Spec
	var p Planned
	p.PerVariant = float64(len(sp.Datapaths)) * float64(len(sp.Replicas)) * float64(len(sp.Tunings)) * float64(len(s.ImpairmentCells()))
	trial := (sp.Duration.Duration + sp.Cooldown.Duration).Seconds()
	selected := s.selectedByEntry()
	for _, w := range sp.Workloads {
		cells := p.PerVariant * float64(len(w.Variants()))
		if selected != nil {
			cells = float64(selected[w.Name])
		}
		probes := ceilingSeconds(w)
		p.Cells += cells
		p.MinSeconds += cells * float64(sp.Trials.Min) * (trial + probes)
		p.MaxSeconds += cells * float64(sp.Trials.Max) * (trial + probes)
		p.SearchSeconds += cells * float64(sp.Trials.Max) * probes
	}
	return p
}

// walkable bounds the matrix spec.only's selection is counted in: a
// larger one (lists of up to MaxListLen entries each) is counted whole,
// which checkPlanned refuses as more than MaxCells.
const walkable = 1e6

// selectedByEntry counts, per workload entry, the cells spec.only
// selects; nil without spec.only or over a matrix too large to walk.
func (s *Study) selectedByEntry() map[string]int {
	sp := &s.Spec
	if len(sp.Only) == 0 {
		return nil
	}
	whole := float64(len(sp.Datapaths)) * float64(len(sp.Replicas)) * float64(len(sp.Tunings)) * float64(len(s.ImpairmentCells()))
	if whole*float64(len(s.Variants())) > walkable {
		return nil
	}
	out := map[string]int{}
	for _, c := range s.Cells() {
		out[EntryOf(c.Workload)]++
	}
	return out
}

// Seconds turns a planned number of seconds into a duration, capped at
// what a study may plan.
func Seconds(x float64) time.Duration {
	if x > MaxPlanned.Seconds() {
		return MaxPlanned
	}
	return time.Duration(x * float64(time.Second)).Round(time.Second)
}
