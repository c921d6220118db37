package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TuningDef is one tuning of a run and what the run's trials set
// (env.json's record; none for a baseline and in runs made before
// cnibench recorded it).
type TuningDef struct {
	Name string `json:"name"`
	// SetsNothing: the tuning is the machine as found.
	SetsNothing bool                    `json:"sets_nothing,omitempty"`
	Set         []results.TuningSetting `json:"set,omitempty"`
}

// TuningsOf lists the study's tunings in its order, each with what the
// run recorded it set.
func TuningsOf(s *study.Study, env results.Env) []TuningDef {
	if s == nil {
		return nil
	}
	var out []TuningDef
	for _, t := range s.Spec.Tunings {
		out = append(out, TuningDef{Name: t.Name, SetsNothing: t.IsBaseline(), Set: env.Tunings[t.Name]})
	}
	return out
}
