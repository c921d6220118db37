package study_test

import (
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// TestBuiltinReferencesMatchCells: every published number of a built-in
// study names a point of its default profile (datapaths, the datapath a
// ratio is against, a workload or one variant of its sweep, a tuning), so
// none of them can silently show "not measured" for a misspelling.
func TestBuiltinReferencesMatchCells(t *testing.T) {
	for _, name := range study.Builtins() {
		s, err := study.Resolve(name, study.Options{}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dps, works, tunings := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, d := range s.Spec.Datapaths {
			dps[d.Name] = true
		}
		for _, w := range s.Spec.Workloads {
			works[w.Name] = true
		}
		for _, w := range s.Variants() {
			works[w.Name] = true
		}
		for _, tu := range s.Spec.Tunings {
			tunings[tu.Name] = true
		}
		for i, r := range s.Spec.Reference {
			for what, v := range map[string]struct {
				name string
				set  map[string]bool
			}{"datapath": {r.Datapath, dps}, "against": {r.Against, dps}, "workload": {r.Workload, works}, "againstWorkload": {r.AgainstWorkload, works}, "tuning": {r.Tuning, tunings}} {
				if v.name != "" && !v.set[v.name] {
					t.Errorf("%s: reference[%d].%s %q is not a point of the study", name, i, what, v.name)
				}
			}
		}
	}
}
