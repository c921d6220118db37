package analysis

import (
	"sort"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Marked is an attempt at a trial that the report lists: one that failed,
// one the noise guard found disturbed and repeated (neither counted), and
// a disturbed one that counted because its repeats were used up.
type Marked struct {
	Cell    results.Cell `json:"cell"`
	Trial   int          `json:"trial"`
	Attempt int          `json:"attempt"`
	Counted bool         `json:"counted"`
	// Why is the error or the thresholds crossed.
	Why   string         `json:"why"`
	Noise *results.Noise `json:"noise,omitempty"`
}

// MarkedOf lists a run's marked attempts in cell and trial order.
func MarkedOf(run *results.Run) []Marked {
	var out []Marked
	for _, s := range run.Marked {
		why := s.Error
		if why == "" {
			why = s.Discarded
		}
		out = append(out, Marked{Cell: s.Cell, Trial: s.Trial, Attempt: s.Attempt, Why: why, Noise: s.Noise})
	}
	for _, s := range run.Samples {
		if CountedDisturbedSample(s) {
			out = append(out, Marked{Cell: s.Cell, Trial: s.Trial, Attempt: s.Attempt, Counted: true,
				Why: "disturbed, counted (repeats used up): " + s.Noise.Disturbed, Noise: s.Noise})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Cell != b.Cell {
			return cellLess(a.Cell, b.Cell)
		}
		if a.Trial != b.Trial {
			return a.Trial < b.Trial
		}
		return a.Attempt < b.Attempt
	})
	return out
}

func cellLess(a, b results.Cell) bool {
	switch {
	case a.Datapath != b.Datapath:
		return a.Datapath < b.Datapath
	case a.Workload != b.Workload:
		return a.Workload < b.Workload
	case a.Replicas != b.Replicas:
		return a.Replicas < b.Replicas
	case a.Tuning != b.Tuning:
		return a.Tuning < b.Tuning
	}
	return a.Impairment < b.Impairment
}

// AddRun adds what the run recorded beside its counted samples: the
// adaptive controller's stops, the marked attempts, how it started and
// what its tunings set (s may be nil).
func (m *Model) AddRun(s *study.Study, run *results.Run) {
	m.Stops = run.Stops
	m.Unfinished = Unfinished(s, run)
	m.Skipped = results.SkippedOf(run.Env.Notes)
	m.Marked = MarkedOf(run)
	m.Origin, m.MachineS = run.Env.Origin, run.Env.MachineS
	m.Tunings = TuningsOf(s, run.Env)
	if s != nil {
		// What the run recorded of its nodes (shared_kernel, engine), not
		// inferred from the rows (SharedNodeReadings, CPPOneNode).
		m.markMethods(s, &run.Env)
	}
	// Per-second samples judge it (cpu.jsonl): a run's file, not the
	// samples Build has.
	m.OneCore = OneCoreCells(run.Samples, run.CPU, run.Env.MachineCPUs)
}

// CountedDisturbedSample says whether a counted sample is one the noise
// guard found disturbed (counted because its repeats were used up).
func CountedDisturbedSample(s results.Sample) bool { return s.Noise != nil && s.Noise.Disturbed != "" }

// CountedDisturbed counts, per cell, the counted trials the noise guard
// found disturbed (counted because their repeats were used up): their
// spread is in the cell's interval and in what a rerun's estimates
// assume.
func CountedDisturbed(marked []Marked) map[results.Cell]int {
	out := map[results.Cell]int{}
	for _, k := range marked {
		if k.Counted {
			out[k.Cell]++
		}
	}
	return out
}

// MachineTime is the machine time the run spent (Model.MachineS), 0 when
// not recorded.
func (m Model) MachineTime() time.Duration {
	return time.Duration(m.MachineS * float64(time.Second))
}
