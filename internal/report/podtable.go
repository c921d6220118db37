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
		most, ok := n.samePods(g, metric, reps)
		if !ok {
			return full
		}
		folded.Rows[0] = append(folded.Rows[0], n.absCell(most))
	}
	return folded
}

// samePods returns the row that stands for every tuning's at one replica
// count of a pod metric, when they are one measurement: the row with the
// most trials (a tuning that stopped earlier holds fewer of the rounds'
// pods), which every other agrees with trial by trial.
func (n *numbers) samePods(g analysis.Group, metric string, reps int) (analysis.Row, bool) {
	var rows []analysis.Row
	for _, tn := range g.Dims.Tunings {
		if r, ok := n.row(results.Cell{Datapath: g.Datapath, Tuning: tn, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}, metric, -1); ok {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 || len(rows) != len(g.Dims.Tunings) {
		return analysis.Row{}, false
	}
	most := rows[0]
	for _, r := range rows {
		if r.N > most.N {
			most = r
		}
	}
	for _, r := range rows {
		if !analysis.SamePods(r, most) {
			return analysis.Row{}, false
		}
	}
	return most, true
}
