package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/study"
)

// impairmentNeeds is what each impairment of the study needs on the
// nodes (netem; ifb for ingress), named so that a refusal says which
// impairment and datapaths it would have affected.
func impairmentNeeds(s *study.Study) []engine.Need {
	var out []engine.Need
	for _, m := range s.Spec.Impairments {
		if m.IsNone() {
			continue
		}
		f := knob.Needs(knob.Trial, &knob.Target{Study: s, Impairment: m})
		what := fmt.Sprintf("impairment %s (%s %s of %s)", m.Name, s.Spec.ImpairAt.Where, s.Spec.ImpairAt.Direction,
			strings.Join(s.DatapathNames(), ", "))
		out = append(out, engine.Need{What: what, Features: f})
	}
	return out
}
