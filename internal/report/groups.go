package report

import (
	"fmt"
	"math"

	"github.com/cnibench/cnibench/internal/analysis"
)

// groupsTable lists the cells whose trials fall in two separated groups
// (analysis.Row.Groups): each group's mean and size, how far apart, and
// whether the groups alternate over the rounds or split them in time.
func groupsTable(m analysis.Model) table {
	t := table{Head: []string{"cell", "metric", "low group", "high group", "separation", "over the rounds"}}
	for _, r := range m.Rows {
		g := r.Groups
		if g == nil {
			continue
		}
		sc := analysis.Display(r.Metric)
		sep := "one value each"
		if !math.IsInf(g.Separation, 0) {
			sep = fmt.Sprintf("%.1f sd", g.Separation)
		}
		when := "alternating"
		if g.InTime {
			when = "one group, then the other (a level shift)"
		}
		t.Rows = append(t.Rows, []string{CellName(r.Cell), r.Metric,
			fmt.Sprintf("%s %s (%d trials)", sc.Format(g.LowMean), sc.Unit, g.LowN),
			fmt.Sprintf("%s %s (%d trials)", sc.Format(g.HighMean), sc.Unit, g.HighN), sep, when})
	}
	return t
}

const groupsCaption = "Cells whose trials fall in two separated groups (docs/statistics.md, \"Two groups of trials\"): " +
	"each group of 3 trials or more, the means at least 2% apart, and either 6 pooled standard deviations apart or, " +
	"where one group is tight and the other wide, two normal groups fitting far better than one (a likelihood ratio that samples of one normal value reach in 0.25% of runs). " +
	"The cell's interval assumes its trials scatter around one value; here they do not, so read the two groups, " +
	"and expect more trials to narrow its interval only slowly. Alternating groups are a property of the setup " +
	"(a flow hashed to one core or another); a level shift is the machine changing during the run."
