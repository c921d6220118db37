package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
)

// sweepSummary is a sweep of the model as the report shows it: title,
// table and caption.
func (n *numbers) sweepSummary(sw analysis.SweepSummary) sweepView {
	v := sweepView{Title: sweepTitle(sw), Caption: n.sweepCaption(sw), Table: n.sweepTable(sw)}
	if len(v.Table.Head) > 0 {
		v.Caption += fmt.Sprintf(" The figures show the sweep at tuning %s and %d replica%s; the table of all summary rows has every value.",
			sw.Tuning, sw.Replicas, plural(sw.Replicas))
	}
	return v
}
