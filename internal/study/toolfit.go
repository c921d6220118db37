package study

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// validateToolFit refuses what a workload's tool says it cannot run that
// no option bound expresses, before any node is built: a trial shorter
// than the tool's driver takes (spec.Tool.MinDuration), which would
// fail every trial, and an impairment the tool cannot measure through
// (spec.Tool.RefuseImpairment), whose cells would report numbers that
// are not what they say.
func validateToolFit(s *Study, cat Catalog, bad badFunc) {
	sp := &s.Spec
	refuseOffPath(s, bad)
	for i, w := range sp.Workloads {
		if t, ok := cat.Tool(w.Tool); ok && t.RefuseImpairment != nil {
			refuseImpairments(s, w, fmt.Sprintf("spec.workloads[%d]", i), t, bad)
		}
	}
	seen := map[string]bool{}
	for _, w := range sp.Workloads {
		t, ok := cat.Tool(w.Tool)
		if !ok || seen[t.Name] || t.Task || t.MinDuration <= 0 || !s.runs(w, "") {
			continue
		}
		seen[t.Name] = true
		if d := sp.Duration.Duration; d > 0 && d < t.MinDuration {
			bad("spec.duration", "%s is shorter than %s runs (at least %s: %s; workload %s)",
				ShortDuration(d), t.Name, ShortDuration(t.MinDuration), t.MinDurationWhy, w.Name)
		}
	}
}

// runs reports whether a run of the study measures workload entry w
// (with impairment, a spec.impairments name; "" for any): always
// without spec.only; with it, when a selector picks a cell of w (the
// cells a picked one is compared with differ from it in tuning or
// datapath only, so they add no workload or impairment).
func (s *Study) runs(w Workload, impairment string) bool {
	if len(s.Spec.Only) == 0 {
		return true
	}
	for _, sel := range s.Spec.Only {
		if (sel.Workload == "" || EntryOf(sel.Workload) == w.Name) &&
			(impairment == "" || sel.Impairment == "" || sel.Impairment == impairment) {
			return true
		}
	}
	return false
}

// refuseOffPath refuses a workload with both ends on one node (intra-node,
// or a hairpin) measured under an impairment placed where its packets
// never pass (a tunnel or the
// underlay; they cross the pods' veths only): its impaired cells would be
// labelled with an impairment they never met, and every trial of them
// would fail the runner's check that netem saw the trial's packets.
func refuseOffPath(s *Study, bad badFunc) {
	sp := &s.Spec
	if sp.ImpairAt.Where == WhereClientPods {
		return
	}
	for i, w := range sp.Workloads {
		if !w.ClientOnServerNode() {
			continue
		}
		field, what := "placement", "is intra-node"
		if !w.IntraNode() {
			field, what = "target", "is a hairpin (its client in the server pod)"
		}
		for _, m := range sp.Impairments {
			if m.IsNone() || !s.runs(w, m.Name) {
				continue
			}
			bad(fmt.Sprintf("spec.workloads[%d].%s", i, field), "workload %s %s: its packets cross the pods' veths only, "+
				"never the impairment's device at %s, so its cells under %s would measure no impairment; impair at client-pods "+
				"(spec.impairAt.where), or leave it out of the impaired cells (spec.only)", w.Name, what, sp.ImpairAt.Where, m.Name)
			break
		}
	}
}

// refuseImpairments reports, at the workload's protocol, each impairment
// of the study on its path that its tool refuses. An impairment on a
// tunnel or underlay device is off the path of an intra-node workload,
// whose packets cross the pods' veths only.
func refuseImpairments(s *Study, w Workload, f string, t spec.Tool, bad badFunc) {
	sp := &s.Spec
	if w.IntraNode() && sp.ImpairAt.Where != WhereClientPods {
		return
	}
	for j, m := range sp.Impairments {
		if m.IsNone() || !s.runs(w, m.Name) {
			continue
		}
		if why := t.RefuseImpairment(w.Protocol, m.Name, m.Fields); why != "" {
			bad(f+".protocol", "%s %s cannot run through impairment %s (spec.impairments[%d]): %s",
				w.Tool, w.Protocol, m.Name, j, why)
		}
	}
}
