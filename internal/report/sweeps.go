package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// sweepSummary is a sweep's table (analysis.SweepSummary) as the report
// shows it.
func sweepSummary(s *study.Study, sw analysis.Sweep, rows []results.SummaryRow) sweepView {
	t := analysis.SweepSummary(s, sw, rows)
	if len(t.Head) > 0 {
		t.Caption += fmt.Sprintf(" The figures show the sweep at tuning %s and %d replica%s; the table of all summary rows has every value.",
			sw.Tuning, sw.Replicas, plural(sw.Replicas))
	}
	return sweepView{Title: t.Title, Caption: t.Caption, Table: table{Head: t.Head, Rows: t.Rows}}
}
