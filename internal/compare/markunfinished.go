package compare

import "github.com/cnibench/cnibench/internal/results"

// MarkUnfinished marks the rows of B's cells that B ended before
// finishing (unfinished: analysis.Unfinished of B), each of which was to
// have planned trials ("5", "3 to 10"). A cell B never reached is
// missing already; one it reached and left, at two trials of ten, had
// intervals too wide to exclude 1 and passed a gate, though the run
// was cut short as surely.
func MarkUnfinished(rows []Row, unfinished []results.Cell, planned string) {
	in := map[key]bool{}
	for _, c := range unfinished {
		in[cellKey(c, "")] = true
	}
	for i := range rows {
		if in[rows[i].cellB] {
			rows[i].UnfinishedB, rows[i].PlannedB = true, planned
		}
	}
}
