package study

import (
	"fmt"
	"strings"

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

// refuseOffPath refuses a workload with both ends on the server node
// (intra-node, or a hairpin: its client in the server pod) measured
// under an impairment: no place impairAt can name is on its path. Its
// packets cross neither a tunnel nor the underlay, and client-pods
// impairs the measured client pods' veths on the client node (a hairpin's
// traffic never leaves the server pod's; an intra-node client is on the
// server node, where the knob finds no such pod). Its impaired cells would
// be labelled with an impairment they never met, and every trial of them
// would fail the runner's check that netem saw the trial's packets.
func refuseOffPath(s *Study, bad badFunc) {
	sp := &s.Spec
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
			bad(fmt.Sprintf("spec.workloads[%d].%s", i, field), "workload %s %s: both its ends are on the server node, so no "+
				"impairment place (spec.impairAt.where: %s) is on its path and its cells under %s would measure no impairment; "+
				"leave it out of the impaired cells (spec.only)", w.Name, what, strings.Join(Wheres(), ", "), m.Name)
			break
		}
	}
}

// refuseImpairments reports, at the workload's protocol, each impairment
// of the study on its path that its tool refuses. None is on the path of
// a workload with both ends on the server node, which refuseOffPath
// refuses whatever its tool.
func refuseImpairments(s *Study, w Workload, f string, t spec.Tool, bad badFunc) {
	sp := &s.Spec
	if w.ClientOnServerNode() {
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
