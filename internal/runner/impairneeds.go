package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/study"
)

// impairmentNeeds is what the study's impairments need on the nodes
// (netem; ifb for ingress), named so that a refusal says which
// impairments and datapaths it would have affected. Every impairment of a
// study goes to the same place, so they need the same: one need, probed
// once.
func impairmentNeeds(s *study.Study) []engine.Need {
	var names []string
	var first study.Impairment
	field := ""
	for i, m := range s.Spec.Impairments {
		if m.IsNone() || knob.ImpairsNothing(m) {
			continue
		}
		if len(names) == 0 {
			first, field = m, fmt.Sprintf("spec.impairments[%d]", i)
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return nil
	}
	what := "impairment " + names[0]
	if len(names) > 1 {
		what = fmt.Sprintf("impairments %s and %d more", names[0], len(names)-1)
	}
	what += fmt.Sprintf(" at %s %s", s.Spec.ImpairAt.Where, s.Spec.ImpairAt.Direction)
	f := knob.Needs(knob.Trial, &knob.Target{Study: s, Impairment: first})
	return []engine.Need{{What: what, Of: s.DatapathNames(), Field: field, Features: f, Without: withoutImpairments(s)}}
}

// withoutImpairments names the ways to run the study on a kernel without
// netem: its profiles whose impairments are only none (flannel-backends'
// quick-none), then the override that works for any study.
func withoutImpairments(s *study.Study) string {
	var ways []string
	for _, name := range s.ProfileNames() {
		if name != s.Profile && onlyNone(s.Profiles[name]) {
			ways = append(ways, "--profile "+name)
		}
	}
	return strings.Join(append(ways, "--set impairments=[none]"), ", or ")
}

// onlyNone reports whether a profile (raw YAML) sets impairments to none
// alone.
func onlyNone(profile any) bool {
	p, _ := profile.(map[string]any)
	list, _ := p["impairments"].([]any)
	for _, m := range list {
		if m != study.NoImpairment {
			return false
		}
	}
	return len(list) > 0
}
