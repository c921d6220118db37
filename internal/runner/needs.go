package runner

import (
	"slices"

	"github.com/cnibench/cnibench/internal/engine/localengine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// LocalNeeds is every feature (probe names) the preflight of a run of s
// on this machine asks for: each datapath entry's (its datapath's and its
// knobs'), what the local engine adds (bridge netfilter for an entry
// that measures its netfilter state), and the per-trial knobs'
// (tunings, impairments, workload targets). It is the list preflight
// refuses or skips with, so doctor names with it the studies a missing
// feature keeps from running whole. It probes nothing itself; building
// the entries asks their datapaths' Features, which may (weave's mode).
func LocalNeeds(s *study.Study) ([]string, error) {
	p := &plan{drivers: map[string]workload.Driver{}}
	n, err := p.needs(s, true)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(fs ...string) {
		for _, f := range fs {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	for _, d := range n.Datapaths {
		add(d.Features...)
		add(localengine.Required(d)...)
	}
	for _, k := range n.Knobs {
		add(k.Features...)
	}
	return out, nil
}
