package report

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// wideTable lists the rows whose trials spread far more than the other
// cells' of their workload and metric (analysis.Row.Wide): the trials as
// they ran, and the two spreads with the test that compared them.
func wideTable(m analysis.Model) table {
	t := table{Head: []string{"cell", "metric", "trials, in the order they ran", "spread", "the other cells'", "F test"}}
	for _, r := range m.Rows {
		w := r.Wide
		if w == nil {
			continue
		}
		sc := analysis.Display(r.Metric)
		vals := make([]string, len(w.Values))
		for i, v := range w.Values {
			vals[i] = sc.Format(v)
		}
		t.Rows = append(t.Rows, []string{CellName(r.Cell), r.Metric, strings.Join(vals, ", ") + " " + sc.Unit,
			fmt.Sprintf("±%.1f%%", 100*w.Spread), fmt.Sprintf("±%.1f%% (%d cells)", 100*w.Typical, w.Others), "p" + analysis.FormatP(w.P)})
	}
	return t
}

var wideCaption = fmt.Sprintf("Cells whose trials spread at least %.0f times as much as the other cells of their workload, impairment and metric "+
	"(the standard deviation of the trials' logarithms, about the spread relative to the mean; docs/statistics.md, \"Trials that spread widely\"): "+
	"significant in a one-sided F test against the others' pooled spread at %.0f%% over the cells compared (Bonferroni). "+
	"The cell's interval rests on its own few trials and assumes they scatter around one value, so read the trials: "+
	"two values (with RPS and one flow, the flow hash picks the core that does the packet work, a coin toss per trial), "+
	"or a trial the machine disturbed (Marked trials). More trials narrow such a cell's interval slowly; "+
	"from 6 trials on, 3 or more near each of two values, the report names them (Two groups of trials).", stats.WideRatio, 100*(1-stats.WideAlpha))

// WideLine is the note at the end of `cnibench run` for cells whose
// trials spread far more than their neighbours'; "" when none. A cell
// wide in two metrics (a request/response cell's rate and latency) is
// named once, with its first.
func WideLine(rows []analysis.Row) string {
	var names []string
	seen := map[results.Cell]bool{}
	for _, r := range rows {
		if r.Wide != nil && !seen[r.Cell] {
			seen[r.Cell] = true
			names = append(names, fmt.Sprintf("%s: ±%.0f%% against ±%.1f%%", CellName(r.Cell), 100*r.Wide.Spread, 100*r.Wide.Typical))
		}
	}
	if len(names) == 0 {
		return ""
	}
	what := fmt.Sprintf("%d cells' trials spread", len(names))
	if len(names) == 1 {
		what = "1 cell's trials spread"
	}
	return fmt.Sprintf("note: %s far more than the other cells of their workload (%s): read their trials before their intervals "+
		"(summary.md, \"Trials that spread widely\")", what, listSome(names, maxNamed))
}
