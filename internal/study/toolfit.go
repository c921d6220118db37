package study

// validateToolFit refuses what a workload's tool says it cannot run that
// no option bound expresses, before any node is built: a trial shorter
// than the tool's driver takes (spec.Tool.MinDuration), which would
// fail every trial.
func validateToolFit(s *Study, cat Catalog, bad badFunc) {
	sp := &s.Spec
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
