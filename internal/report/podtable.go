package report

import (
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// podTable is a pod metric's tuning × replicas table. Every tuning at one
// replica count runs on the pods scaled for it, so their set-up is one
// measurement recorded in each tuning's cells: when every tuning's row
// agrees with the others trial by trial (analysis.SamePods), the table is
// one row for all of them, not the same number once per tuning.
func (n *numbers) podTable(g analysis.Group, metric string) table {
	full := n.tuningTable(g, metric, -1, n.absCell)
	folded := table{Head: full.Head, Rows: [][]string{{"every tuning (the same pods)"}}}
	for _, reps := range g.Dims.Replicas {
		var rows []analysis.Row
		for _, tn := range g.Dims.Tunings {
			if r, ok := n.row(results.Cell{Datapath: g.Datapath, Tuning: tn, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}, metric, -1); ok {
				rows = append(rows, r)
			}
		}
		if len(rows) != len(g.Dims.Tunings) {
			return full
		}
		// The row with the most trials stands for all: a tuning that
		// stopped earlier holds fewer of the rounds' pods.
		most := rows[0]
		for _, r := range rows {
			if r.N > most.N {
				most = r
			}
		}
		for _, r := range rows {
			if !analysis.SamePods(r, most) {
				return full
			}
		}
		folded.Rows[0] = append(folded.Rows[0], n.absCell(most))
	}
	return folded
}
