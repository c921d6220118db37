package report

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// The report reads a run's study.yaml back without validating it
// (decodeStudy); the cells it then lists are the cells the run planned,
// for every built-in study and profile: a cell of one and not the other
// would be "missing" on the page of a finished run, or unfinished.
func TestDecodedStudyHasTheRunsCells(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, name := range study.Builtins() {
		base, err := study.Resolve(name, study.Options{}, cat)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append([]string{""}, base.ProfileNames()...) {
			s, err := study.Resolve(name, study.Options{Profile: p}, cat)
			if err != nil {
				t.Fatalf("%s %s: %v", name, p, err)
			}
			y, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			d, err := decodeStudy(y)
			if err != nil {
				t.Fatalf("%s %s: %v", name, p, err)
			}
			if got, want := d.Cells(), s.Cells(); !slices.Equal(got, want) {
				t.Errorf("%s profile %q: decoded study has %d cells, the run %d", name, p, len(got), len(want))
			}
			if d.RecordsStops() != s.RecordsStops() {
				t.Errorf("%s profile %q: decoded study records stops %v, the run %v", name, p, d.RecordsStops(), s.RecordsStops())
			}
		}
	}
}
