package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/markdown"
	"github.com/cnibench/cnibench/internal/results"
)

// Bound is a cell of both runs that one core bound (analysis.OneCore:
// Listed) in A, in B or in both, on one node. Its ratio then compares one
// core's limit with another limit: a tuning that moves packet work to an
// idle core (RPS, RFS) shows as a cell bound in A and not in B.
type Bound struct {
	Key  string `json:"cell"`
	Node string `json:"node"`
	// A and B are the node's tallies in each run; N == 0: the run has no
	// per-core samples of that node (no cpu collector).
	A analysis.OneCore `json:"a"`
	B analysis.OneCore `json:"b"`
	// ABound and BBound are the rule applied to each tally (Listed), so
	// that a reader of compare's JSON need not apply it again.
	ABound bool `json:"a_bound"`
	BBound bool `json:"b_bound"`
}

// OneCore lists the cells of both runs bound by one core in either, in
// the order run A measured them, matched as Runs matches cells (studyA
// and studyB as Runs takes them).
func OneCore(a, b *results.Run, studyA, studyB []results.Cell) []Bound {
	type nodeKey struct {
		cell key
		node string
	}
	tally := func(r *results.Run) map[nodeKey]analysis.OneCore {
		m := map[nodeKey]analysis.OneCore{}
		for _, oc := range analysis.OneCoreTally(r.Samples, r.CPU, r.Env.MachineCPUs) {
			m[nodeKey{cellKey(oc.Cell, ""), oc.Node}] = oc
		}
		return m
	}
	ta, tb := tally(a), tally(b)
	inB := firstSeen(b.Samples)
	p := newPairing(a, b, studyA, studyB)
	var out []Bound
	for _, k := range cellsInOrder(a.Samples) {
		kb := p.inB(k)
		if _, ok := inB[kb]; !ok {
			continue
		}
		for _, node := range []string{"server", "client"} {
			oa, ob := ta[nodeKey{k, node}], tb[nodeKey{kb, node}]
			if oa.Listed() || ob.Listed() {
				out = append(out, Bound{Key: p.name(k), Node: node, A: oa, B: ob, ABound: oa.Listed(), BBound: ob.Listed()})
			}
		}
	}
	return out
}

// writeOneCoreMarkdown is the table of cells bound by one core in either
// run, after the rows, saying why it matters to them.
func writeOneCoreMarkdown(w io.Writer, bound []Bound) error {
	if len(bound) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nBound by one core: in at least half of a cell's trials, one core was at least %.0f%% busy while "+
		"another was at least %.0f%% idle in at least half of the seconds, so its number is what one core could do. A ratio between a bound run and one "+
		"that is not compares that core's limit with another (docs/statistics.md, \"Bound by one core\").\n\n",
		analysis.OneCoreBusy, analysis.OneCoreIdle)
	fmt.Fprintln(w, "| cell | node | A | B |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, b := range bound {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", markdown.Cell(b.Key), b.Node, boundText(b.A), boundText(b.B)); err != nil {
			return err
		}
	}
	return nil
}

// boundText is one run's side of a Bound row: "bound in 3 of 4 trials
// (cpu 0, 1: 99% busy, 72% softirq)", "1 of 4 trials bound", or "no
// per-core samples".
func boundText(oc analysis.OneCore) string {
	switch {
	case oc.N == 0:
		return "no per-core samples"
	case !oc.Listed():
		return fmt.Sprintf("%d of %d trials bound", oc.Bound, oc.N)
	}
	cpus := make([]string, len(oc.BusyCPUs))
	for i, c := range oc.BusyCPUs {
		cpus[i] = fmt.Sprint(c)
	}
	return fmt.Sprintf("**bound** in %d of %d trials (cpu %s: %.0f%% busy, %.0f%% softirq)",
		oc.Bound, oc.N, strings.Join(cpus, " or "), oc.BusyPct, oc.SoftIRQPct)
}
