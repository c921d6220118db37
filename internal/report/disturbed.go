package report

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Disturbed is how many counted trials of each cell the noise guard found
// disturbed and counted because their repeats were used up
// (analysis.CountedDisturbed), with the study that says what each cell
// was compared with (nil: the cell alone). Their spread is in the cell's
// interval and in a rerun's estimates, which a quiet machine may not
// need: the decisions and the rerun line say so.
type Disturbed struct {
	Counted map[results.Cell]int
	Study   *study.Study
}

// note says how many of cell c's counted trials, and of the cell it was
// compared with, were counted though disturbed: "2 of its 4 trials and 1
// of baseline's 4 counted though disturbed (repeats used up)"; "" for
// none.
func (d Disturbed) note(c results.Cell, stops []results.Stop) string {
	own := d.Counted[c]
	var ref results.Cell
	var refN int
	hasRef := false
	if d.Study != nil {
		if ref, hasRef = d.Study.VersusOf(c); hasRef {
			refN = d.Counted[ref]
		}
	}
	if own == 0 && refN == 0 {
		return ""
	}
	var parts []string
	if own > 0 {
		parts = append(parts, fmt.Sprintf("%d of its %s", own, trialsOf(c, stops)))
	}
	if refN > 0 {
		name := ref.Tuning
		if ref.Tuning == c.Tuning {
			name = ref.Datapath
		}
		of := trialsOf(ref, stops)
		if own > 0 { // "1 of baseline's 4", the noun said once
			of, _ = strings.CutSuffix(of, " trials")
		}
		parts = append(parts, fmt.Sprintf("%d of %s's %s", refN, name, of))
	}
	text := parts[0]
	if len(parts) == 2 {
		text += " and " + parts[1]
	}
	return text + " counted though disturbed (repeats used up)"
}

// trialsOf is "4 trials" for a cell with a stop, "trials" without one.
func trialsOf(c results.Cell, stops []results.Stop) string {
	for _, s := range stops {
		if s.Cell == c {
			if s.N == 1 {
				return "1 trial"
			}
			return fmt.Sprintf("%d trials", s.N)
		}
	}
	return "trials"
}

// undecidedDisturbed counts the undecided cells of stops whose trials, or
// their reference's, were counted though disturbed.
func (d Disturbed) undecidedDisturbed(stops []results.Stop) int {
	n := 0
	for _, s := range stops {
		if lineVerdict(s) == "undecided" && d.note(s.Cell, stops) != "" {
			n++
		}
	}
	return n
}
