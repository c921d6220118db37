package seen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// netfilterShare is the part of the CPU cost per packet spent in
// netfilter from which a cell is named. It is this tool's heuristic, not
// a published number: seed 004 measured netfilter at 245-324 cycles per
// packet intra-host and up to 749 inter-host (Calico with policy over
// IP-in-IP, its largest component), a tenth or more of the totals it
// reports; below a tenth, fewer rules would save little.
const netfilterShare = 0.10

// netfilter: the cells whose CPU cost per packet (workloads with cpp)
// went a tenth or more into netfilter, the largest share first, with
// the range of the others; a cell of fewer than minTrials trials is
// neither (one trial's share may be its accident).
func netfilter(run *results.Run, _ *study.Study) found {
	var over, under []analysis.Share
	for _, sh := range analysis.ComponentShares(run.Samples, "netfilter") {
		switch {
		case sh.Total <= 0 || sh.N < minTrials:
		case sh.Fraction() >= netfilterShare:
			over = append(over, sh)
		default:
			under = append(under, sh)
		}
	}
	if len(over) == 0 {
		return found{}
	}
	byShare := func(a, b analysis.Share) int { return cmp.Compare(b.Fraction(), a.Fraction()) }
	slices.SortStableFunc(over, byShare)
	named := someOf(len(over), func(i int) string {
		sh := over[i]
		return fmt.Sprintf("%s %.0f%% (%.0f of %.0f %s per packet, means of %s)",
			report.CellName(sh.Cell), 100*sh.Fraction(), sh.Part, sh.Total, sh.Unit, trials(sh.N))
	})
	text := fmt.Sprintf("netfilter took %.0f%% or more of the CPU cost per packet in %d of the %d cells that measured it: %s",
		100*netfilterShare, len(over), len(over)+len(under), named)
	if len(under) > 0 {
		slices.SortStableFunc(under, byShare)
		text += fmt.Sprintf("; in the others %.0f%% to %.0f%%", 100*under[len(under)-1].Fraction(), 100*under[0].Fraction())
	}
	var shown []results.Cell
	for _, sh := range over {
		shown = append(shown, sh.Cell)
	}
	return found{text: text, cells: shown, lean: advise.LeanFor}
}
