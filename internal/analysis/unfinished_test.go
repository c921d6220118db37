package analysis

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A run whose design stops each cell is unfinished in the cells without
// a stop; a plain fixed design records none and is never called so.
func TestUnfinished(t *testing.T) {
	parse := func(spec string) *study.Study {
		t.Helper()
		s, err := study.Parse("s.yaml", []byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n"+spec), study.Options{}, testCatalog)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := parse("  datapaths: [calico-vxlan]\n  tunings: [baseline, rps]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1, 4]\n  trials: {min: 3, max: 6}\n  duration: 5s\n")
	cells := s.Cells()
	var first []results.Stop // the block at 1 pair ended, the one at 4 did not
	for _, c := range cells {
		if c.Replicas == 1 {
			first = append(first, results.Stop{Cell: c})
		}
	}
	got := Unfinished(s, first)
	want := slices.DeleteFunc(slices.Clone(cells), func(c results.Cell) bool { return c.Replicas == 1 })
	if !slices.Equal(got, want) {
		t.Errorf("one block stopped: unfinished %v, want %v", got, want)
	}
	if got := Unfinished(s, nil); !slices.Equal(got, cells) {
		t.Errorf("no stops: unfinished %v, want every cell", got)
	}
	var all []results.Stop
	for _, c := range cells {
		all = append(all, results.Stop{Cell: c})
	}
	if got := Unfinished(s, all); len(got) != 0 {
		t.Errorf("every cell stopped: unfinished %v", got)
	}
	plain := parse("  datapaths: [calico-vxlan]\n  workloads: [{name: tcp, tool: iperf3}]\n  trials: 3\n  duration: 5s\n")
	if got := Unfinished(plain, nil); got != nil {
		t.Errorf("a plain fixed design: unfinished %v", got)
	}
}
