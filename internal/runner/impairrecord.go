package runner

import (
	"reflect"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// recordImpairment adds what a trial's impairment installed to
// env.json (the report's line per impairment), written when it adds
// something: the device, the direction and the netem as installed, whose
// queue limit Apply may have raised under the link-rate shaper. A trial
// that installed nothing (none, an all-zero definition) adds nothing.
// The record is the cell's impairment's (m, its definition).
func (r *run) recordImpairment(cell results.Cell, m study.Impairment, imp engine.Impaired) error {
	set := impairmentSettings(cell.Datapath, r.study.Spec.ImpairAt, m, imp)
	if len(set) == 0 || cell.Impairment == "" {
		return nil
	}
	prior := r.env.Impairments[cell.Impairment]
	merged := results.MergeImpairments(prior, set)
	if reflect.DeepEqual(merged, prior) {
		return nil
	}
	if r.env.Impairments == nil {
		r.env.Impairments = map[string][]results.ImpairmentSetting{}
	}
	r.env.Impairments[cell.Impairment] = merged
	return r.out.WriteEnv(r.env)
}

// impairmentSettings are env.json's entries of one trial's impairment:
// one per netem installed (the devices of one node get the same, but for
// a limit raised on one of them).
func impairmentSettings(datapath string, at study.ImpairAt, m study.Impairment, imp engine.Impaired) []results.ImpairmentSetting {
	if len(imp.Devs) == 0 || len(imp.Netem) != len(imp.Devs) {
		return nil
	}
	// The limit the impairment gave, or tc's default: a netem with
	// another one got cnibench's (impair.Prev.Limit).
	given := uint32(impair.DefaultLimit)
	if s, err := impair.Resolve(m.Name, m.Fields); err == nil && s.Limit != 0 {
		given = s.Limit
	}
	node := ""
	if imp.Node != nil {
		node = imp.Node.Name()
	}
	var set []results.ImpairmentSetting
	for i, d := range imp.Devs {
		n := imp.Netem[i]
		set = results.MergeImpairments(set, []results.ImpairmentSetting{{Datapath: datapath, Where: at.Where, Direction: at.Direction,
			Node: node, Devices: []string{d.Name}, Netem: n.String(), LimitRaised: n.Limit != 0 && n.Limit != given}})
	}
	return set
}
