package report

// The cells of a table that compare a tuning with the baseline: the
// normalized rate's and the other compared metrics' (latency, CPU cost,
// the metric a study decides on), each with the decision that stands.

import (
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// normCell shows a row's normalized value: "1.100 [1.05, 1.15]; p<0.001
// · paper 1.24", and for a row compared with the baseline the interval
// judged on with its method, what it rests on and the decision: "1.100
// [1.05, 1.15]; p<0.001; judged on 1.098 [1.07, 1.12] paired-t, 6 pairs:
// better". When the comparison rests on the Fieller interval the cell
// starts with, that interval carries its method and count and is not
// printed twice: "0.770 [0.735, 0.807] fieller, n=3 vs baseline's 5;
// p<0.001; worse". When the controller decided the cell at its looks
// (stops.json) that decision is the one shown: a plain 95% interval over
// trials whose count depended on earlier looks is not a valid test, and
// a table saying "worse" beside a repetitions table saying "undecided"
// would leave the reader to pick one.
func (n *numbers) normCell(r analysis.Row) string {
	out := analysis.NormCI(r)
	p := ""
	if s := analysis.FormatP(r.PBaseline); s != "" && r.HasNorm {
		p = "; p" + s
	}
	if r.VsBaseline == nil {
		return out + n.nText(r) + p + n.paperNote(r, true)
	}
	b := n.againstRow(r)
	judged := analysis.PairText(r.VsBaseline, r.N, b.N)
	// Pair.Unpaired is the row's own normalized interval: chosen, it
	// is the one the cell starts with.
	same := r.VsBaseline.Chosen.Method == stats.MethodFieller && analysis.NormHasCI(r)
	if same {
		out = judged
	}
	out += p
	s, stopped := n.stops[analysis.Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU}]
	switch {
	case stopped:
		out += "; " + lookText(s)
		if !same {
			out += "; all trials at 95%: " + judged
		}
	case same:
		out += "; " + analysis.VerdictText(r.VsBaseline)
	default:
		out += "; judged on " + analysis.DecisionText(r.VsBaseline, r.N, b.N)
	}
	return out + n.paperNote(r, true)
}

// againstRow is the baseline tuning's row a row is compared with
// (Row.VsBaseline), for its trial count; empty when there is none.
func (n *numbers) againstRow(r analysis.Row) analysis.Row {
	base := r.Cell
	base.Tuning = r.VsBaseline.Against
	b, _ := n.row(base, r.Metric, r.CPU)
	return b
}

// lookText is the controller's decision of a cell: "worse at the look
// after 6 trials: 0.900 [0.850, 0.950] paired-t (98.33%)". A cell stopped
// before its first look (by the budget) has no decision, and its stop's
// interval is the plain 95% one over all trials.
func lookText(s results.Stop) string {
	if s.Ratio != nil && s.Look > 0 {
		return fmt.Sprintf("%s at the look after %d trials: %s", s.Decision, s.Look, stopInterval(s))
	}
	return fmt.Sprintf("%s (%s)", s.Decision, s.DecisionReason)
}

// absCell shows a row's mean and interval with any published value; a
// row compared with the baseline tuning that no normalized table shows
// (a latency, the CPU cost per packet, the metric a study decides on) also
// that comparison: "33.74 [33.43, 34.05]; ×1.012 [1.003, 1.021] paired-t,
// 3 pairs: worse", or where the controller decided the cell at a look,
// that decision first, as normCell does.
func (n *numbers) absCell(r analysis.Row) string {
	out := analysis.Display(r.Metric).MeanCI(r) + n.nText(r)
	if p := r.VsBaseline; p != nil && !slices.Contains(analysis.NormalizedMetrics, r.Metric) {
		b := n.againstRow(r)
		judged := "×" + analysis.DecisionText(p, r.N, b.N)
		if s, ok := n.stops[analysis.Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU}]; ok {
			judged = lookText(s) + "; all trials at 95%: " + judged
		}
		out += "; " + judged
	}
	return out + n.paperNote(r, false)
}
