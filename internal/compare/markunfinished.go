package compare

import "github.com/cnibench/cnibench/internal/results"

// MarkUnfinished marks the rows of B's cells that B ended before
// finishing (unfinished: analysis.Unfinished of B), each of which was to
// have planned trials ("5", "3 to 10"). A cell B never reached is
// missing already; one it reached and left, at two trials of ten, had
// intervals too wide to exclude 1 and passed a gate, though the run
// was cut short as surely.
func MarkUnfinished(rows []Row, unfinished []results.Cell, planned string) {
	mark(rows, unfinished, func(r *Row) key { return r.cellB }, func(r *Row) {
		r.UnfinishedB, r.PlannedB = true, planned
	})
}

// MarkUnfinishedA marks the rows of A's cells that A ended before
// finishing (analysis.Unfinished of A), as MarkUnfinished marks B's.
// The gate judges them on the trials they have (A is the baseline), so
// this only says it: before, only the header counted them, and a script
// reading the JSON or CSV row by row could not tell a partial baseline
// from a finished one.
func MarkUnfinishedA(rows []Row, unfinished []results.Cell, planned string) {
	mark(rows, unfinished, func(r *Row) key { return r.cellA }, func(r *Row) {
		r.UnfinishedA, r.PlannedA = true, planned
	})
}

// mark sets (set) each row whose cell in one run (cell) is among that
// run's unfinished cells.
func mark(rows []Row, unfinished []results.Cell, cell func(*Row) key, set func(*Row)) {
	in := map[key]bool{}
	for _, c := range unfinished {
		in[cellKey(c, "")] = true
	}
	for i := range rows {
		if in[cell(&rows[i])] {
			set(&rows[i])
		}
	}
}
