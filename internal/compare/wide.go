package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/stats"
)

// wideCells are the cells of one run whose trials spread far more than
// the other cells of their workload, impairment and headline metric
// (stats.WideCells, the test the run's own report marks them by): a
// comparison that rests on such a cell rests on trials worth reading.
func wideCells(v map[key][]float64) map[key]bool {
	type family struct{ workload, impairment, metric string }
	members := map[family][]key{}
	for k := range v {
		if slices.Contains(analysis.HeadlineMetrics, k.metric) {
			f := family{k.workload, k.impairment, k.metric}
			members[f] = append(members[f], k)
		}
	}
	out := map[key]bool{}
	for _, ks := range members {
		cells := make([][]float64, len(ks))
		for i, k := range ks {
			cells[i] = v[k]
		}
		for i, w := range stats.WideCells(cells) {
			if w != nil {
				out[ks[i]] = true
			}
		}
	}
	return out
}

// spreadNote says which run's trials of a row's cell spread widely, and
// how many were counted though disturbed, for the table's n column; ""
// when neither.
func spreadNote(r Row) string {
	var parts []string
	switch {
	case r.WideA && r.WideB:
		parts = append(parts, "both spread widely")
	case r.WideA:
		parts = append(parts, "A spreads widely")
	case r.WideB:
		parts = append(parts, "B spreads widely")
	}
	var d []string
	if r.DisturbedA > 0 {
		d = append(d, fmt.Sprintf("%d of A's", r.DisturbedA))
	}
	if r.DisturbedB > 0 {
		d = append(d, fmt.Sprintf("%d of B's", r.DisturbedB))
	}
	if len(d) > 0 {
		parts = append(parts, "disturbed: "+strings.Join(d, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
