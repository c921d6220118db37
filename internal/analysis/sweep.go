package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Sweep is one study workload's variants at one datapath, tuning and
// replica count, in study order: what a "metric vs swept parameter" figure
// plots.
type Sweep struct {
	Datapath, Tuning string
	// Impairment is the sweep's impairment ("" none): a study with
	// impairments has one sweep per impairment.
	Impairment string
	Replicas   int
	Base       string
	Variants   []study.Workload
}

// Sweeps lists, per datapath and study workload, the variants at the
// study's baseline tuning (or its first) and smallest replica count.
// Workloads without variants are single-point sweeps.
func Sweeps(s *study.Study, rows []Row) []Sweep {
	if s == nil {
		return nil
	}
	d := DimsOf(rows)
	tuning := s.Spec.Baseline
	if tuning == "" && len(s.Spec.Tunings) > 0 {
		tuning = s.Spec.Tunings[0].Name
	}
	reps := 0
	for _, r := range s.Spec.Replicas {
		if reps == 0 || r < reps {
			reps = r
		}
	}
	var out []Sweep
	for _, dp := range d.Datapaths {
		for _, w := range s.Spec.Workloads {
			for _, m := range s.ImpairmentCells() {
				out = append(out, Sweep{Datapath: dp, Tuning: tuning, Impairment: m, Replicas: reps, Base: w.Name, Variants: w.Variants()})
			}
		}
	}
	return out
}

// Cell is the cell of variant v in the sweep.
func (sw Sweep) Cell(v study.Workload) results.Cell {
	return results.Cell{Datapath: sw.Datapath, Tuning: sw.Tuning, Workload: v.Name, Replicas: sw.Replicas, Impairment: sw.Impairment}
}
