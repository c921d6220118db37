package seen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// mostNamed bounds the cells a sighting names.
const mostNamed = 3

// someOf names the first mostNamed of n items, name(i) each, and says
// how many more there are: "a; b; c; and 2 more".
func someOf(n int, name func(i int) string) string {
	var out []string
	for i := range min(n, mostNamed) {
		out = append(out, name(i))
	}
	if n > mostNamed {
		out = append(out, fmt.Sprintf("and %d more", n-mostNamed))
	}
	return strings.Join(out, "; ")
}

// oneCore: the cells at least half of whose trials one core bound
// (analysis.OneCoreCells, the report's "Bound by one core").
func oneCore(run *results.Run, _ *study.Study) found {
	bound := analysis.OneCoreCells(run.Samples, run.CPU)
	if len(bound) == 0 {
		return found{}
	}
	cells := map[results.Cell]bool{}
	for _, s := range run.Samples {
		cells[s.Cell] = true
	}
	var shown []results.Cell
	for _, oc := range bound {
		if !slices.Contains(shown, oc.Cell) {
			shown = append(shown, oc.Cell)
		}
	}
	named := someOf(len(bound), func(i int) string {
		oc := bound[i]
		return fmt.Sprintf("%s on the %s node (a core %.0f%% busy, %.0f%% of it softirq, another %.0f%% idle, in %d of %d trials)",
			report.CellName(oc.Cell), oc.Node, oc.BusyPct, oc.SoftIRQPct, oc.IdlePct, oc.Bound, oc.N)
	})
	text := fmt.Sprintf("%d of its %d cells were bound by one core: %s; their numbers are what one core could do, not the node",
		len(bound), len(cells), named)
	return found{text: text, cells: shown, lean: advise.LeanFor}
}
