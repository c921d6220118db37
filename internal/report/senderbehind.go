package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

// SenderBehindLine is the note at the end of `cnibench run` for UDP cells
// whose senders sent less than ceiling.BehindShare of the offered rate: how many, the
// first few with what they sent, and what that means for their numbers;
// "" when none.
func SenderBehindLine(cells []analysis.SenderBehind) string {
	if len(cells) == 0 {
		return ""
	}
	names := make([]string, len(cells))
	for i, c := range cells {
		names[i] = fmt.Sprintf("%s: %s of %s Mbit/s", CellName(c.Cell), analysis.BoundScale.Format(c.Sent), analysis.BoundScale.Format(c.Offered))
	}
	what := fmt.Sprintf("%d UDP cells", len(cells))
	if len(cells) == 1 {
		what = "1 UDP cell"
	}
	return fmt.Sprintf("note: in %s the senders sent less than %.0f%% of the offered rate (%s): their bitrate and loss are of what was sent, "+
		"not of the offered load, and a verdict does not judge their bitrate against it (sender_bitrate or sent_bps beside offered_bps in summary.csv)",
		what, 100*ceiling.BehindShare, listSome(names, maxNamed))
}
