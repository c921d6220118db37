package seen

import (
	"cmp"
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

// minTrials is the fewest trials of a cell a finding rests on: with one
// a cell has no spread and no interval (stats.Ratio collapses to the
// ratio), and one trial bound by one core, or one netfilter share, may
// be that trial's accident.
const minTrials = 2

// trials is "1 trial" or "n trials".
func trials(n int) string {
	if n == 1 {
		return "1 trial"
	}
	return fmt.Sprintf("%d trials", n)
}

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
// (analysis.OneCoreCells, the report's "Bound by one core"), and at
// least minTrials of them: one bound trial of two is no finding. A cell
// may be bound on both nodes: it is counted once, and each node named.
// The server node's come first: the node advise inspects (with
// --engine kube) and where the tuning A/Bs apply. A run bound on the
// client node alone is no reason for the candidates, which tune the
// server node (advise.LeanClientNode).
func oneCore(run *results.Run, _ *study.Study) found {
	var bound []analysis.OneCore
	for _, oc := range analysis.OneCoreCells(run.Samples, run.CPU, run.Env.MachineCPUs) {
		if oc.Bound >= minTrials {
			bound = append(bound, oc)
		}
	}
	if len(bound) == 0 {
		return found{}
	}
	slices.SortStableFunc(bound, func(a, b analysis.OneCore) int { return cmp.Compare(onClient(a), onClient(b)) })
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
		return fmt.Sprintf("%s on the %s node (a core %.0f%% busy, %.0f%% of it softirq, another %.0f%% idle, in %d of %s)",
			report.CellName(oc.Cell), oc.Node, oc.BusyPct, oc.SoftIRQPct, oc.IdlePct, oc.Bound, trials(oc.N))
	})
	text := fmt.Sprintf("%d of its %d cells were bound by one core: %s; their numbers are what one core could do, not the node",
		len(shown), len(cells), named)
	lean := advise.LeanFor
	if onClient(bound[0]) == 1 {
		lean = advise.LeanClientNode
	}
	return found{text: text, cells: shown, lean: lean}
}

// onClient is 1 for the client node's one-core, 0 for the server's: the
// order oneCore names them in.
func onClient(oc analysis.OneCore) int {
	if oc.Node == "client" {
		return 1
	}
	return 0
}
