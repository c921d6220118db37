package analysis

import (
	"github.com/cnibench/cnibench/internal/stats"
)

// WideSpread is a headline row whose trials spread far more than the
// other cells' of its workload, impairment and metric (stats.WideCells):
// its interval rests on its own few trials, which are not the noise its
// neighbours show. Values are its trials in the order they ran, for a
// reader to see whether they form two values (TwoGroups needs more
// trials) or hold one far trial.
type WideSpread struct {
	stats.Wide
	Values []float64
}

// markWide sets Row.Wide on the headline rows found wide among the rows
// of their workload variant, impairment and metric, except rows already
// split in two (Row.Groups says more). Cells of other workloads or
// impairments are not compared: a loaded or impaired workload spreads
// more by its nature.
func markWide(rows []Row, values map[Key][]float64) {
	type family struct {
		workload, impairment, metric string
	}
	members := map[family][]int{}
	var order []family
	for i, r := range rows {
		if r.CPU >= 0 || !isHeadline(r.Metric) {
			continue
		}
		f := family{r.Workload, r.Impairment, r.Metric}
		if _, ok := members[f]; !ok {
			order = append(order, f)
		}
		members[f] = append(members[f], i)
	}
	for _, f := range order {
		idx := members[f]
		cells := make([][]float64, len(idx))
		for j, i := range idx {
			cells[j] = values[RowKey(rows[i])]
		}
		for j, w := range stats.WideCells(cells) {
			if r := &rows[idx[j]]; w != nil && r.Groups == nil {
				r.Wide = &WideSpread{Wide: *w, Values: cells[j]}
			}
		}
	}
}
