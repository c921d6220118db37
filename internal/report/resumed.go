package report

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
)

// straddleNote names the comparisons whose paired interval left out a
// round cut by a resume (analysis.Straddles): the row's trial of the
// round and its reference's ran either side of the interruption. ""
// when there are none (a run never resumed, or resumed between rounds).
// The report's Method and summary.md say it beside their numbers.
func straddleNote(rows []analysis.Row) string {
	ss := analysis.Straddles(rows)
	if len(ss) == 0 {
		return ""
	}
	var each []string
	for _, s := range ss {
		each = append(each, fmt.Sprintf("%s of %s against %s", roundsText(s.Rounds), CellName(s.Cell), s.Against))
	}
	it := "it straddles"
	if len(ss) > 1 || len(ss[0].Rounds) > 1 {
		it = "they straddle"
	}
	return fmt.Sprintf("The run was resumed (run --resume) in the middle of a round: %s; %s the resume, the two trials of such a round "+
		"ran either side of the interruption, so each is left out of the paired interval and kept in the unpaired (Fieller) one.",
		strings.Join(each, "; "), it)
}

// roundsText is "round 4", "rounds 4 and 5", "rounds 4, 5 and 6".
func roundsText(rounds []int) string {
	var n []string
	for _, r := range rounds {
		n = append(n, fmt.Sprint(r))
	}
	if len(n) == 1 {
		return "round " + n[0]
	}
	return "rounds " + strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
}
