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
	for _, m := range s.Spec.Impairments {
		if m.IsNone() {
			continue
		}
		if len(names) == 0 {
			first = m
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
	what += fmt.Sprintf(" (%s %s of %s)", s.Spec.ImpairAt.Where, s.Spec.ImpairAt.Direction, strings.Join(s.DatapathNames(), ", "))
	f := knob.Needs(knob.Trial, &knob.Target{Study: s, Impairment: first})
	return []engine.Need{{What: what, Features: f}}
}
