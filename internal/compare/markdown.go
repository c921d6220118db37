package compare

import (
	"fmt"
	"io"
	"math"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/markdown"
	"github.com/cnibench/cnibench/internal/stats"
)

// WriteMarkdown prints the rows as a table: A and B with their 95%
// intervals and trial counts, B/A with Fieller's interval, and Welch's p,
// then how each was computed.
func WriteMarkdown(w io.Writer, h Head, rows []Row) error {
	if len(rows) == 0 && len(h.InANotB)+len(h.InBNotA) == 0 {
		// Say what each run holds: the usual cause is two studies, or
		// one renamed entry, whose cells share no name.
		_, err := fmt.Fprintln(w, noRowText(h))
		return err
	}
	for _, side := range [][3]string{{"A", h.A, h.AboutA}, {"B", h.B, h.AboutB}} {
		line := side[0] + " = " + side[1]
		if side[2] != "" {
			line += ": " + side[2]
		}
		fmt.Fprintln(w, line)
	}
	for _, note := range h.notes() {
		fmt.Fprintf(w, "\n%s\n", note)
	}
	if len(rows) == 0 {
		// The metrics compared are each in one run only: the notes
		// say which, and the cells may well match.
		_, err := fmt.Fprintf(w, "\n%s\n", noRowText(h))
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cell | metric | A mean [95% CI] | B mean [95% CI] | n A, B | B/A [95% CI] | p |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	delta, wide, disturbed, below := false, false, false, false
	for _, r := range rows {
		wide = wide || r.WideA || r.WideB
		disturbed = disturbed || r.DisturbedA+r.DisturbedB > 0
		sc := analysis.Display(r.Metric)
		p := "—"
		if !math.IsNaN(r.P) {
			p = fmt.Sprintf("%.3g", r.P)
		}
		ratio := "—"
		if !math.IsNaN(r.Ratio.Ratio) {
			ratio = fmt.Sprintf("%.3f", r.Ratio.Ratio)
			if r.Ratio.Method != stats.MethodNone {
				ratio += fmt.Sprintf(" [%.3f, %.3f]", r.Ratio.Low, r.Ratio.High)
			}
			if r.Ratio.Method == stats.MethodDelta {
				ratio += " delta"
				delta = true
			}
			if r.A.Mean < 0 {
				ratio += " A<0"
				below = true
			}
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %d, %d%s | %s | %s |\n", markdown.Cell(r.Key), analysis.WithUnit(r.Metric, sc.Unit),
			markdown.Cell(aText(r, sc.SummaryCI(r.A))), markdown.Cell(bText(r, sc.SummaryCI(r.B))), r.A.N, r.B.N, spreadNote(r), ratio, p); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "\n%s\n", methodNote(len(rows), delta, wide, disturbed, below)); err != nil {
		return err
	}
	return writeOneCoreMarkdown(w, h.Bound)
}

// bText is B's column of a row: its summary, or why it has none, and
// that B gave the cell up with why (the trials it left before are not
// the cell's whole story, and the gate fails it).
func bText(r Row, summary string) string {
	switch {
	case r.Missing && r.GaveUp != "":
		return "missing: B gave the cell up (" + r.GaveUp + ")"
	case r.Missing && r.Absent == gate.NotReached:
		return "missing: B did not reach it (its study has the cell; the run ended first)"
	case r.Missing && r.Absent == gate.BudgetOut:
		return "missing: B's budget ran out before this cell"
	case r.Missing:
		return "missing (no value in B: every trial of the cell failed there)"
	case r.NotMeasured:
		// Given up or unfinished too: that is what the gate fails it
		// for, so the column says it.
		return notMeasuredText(r, "not measured in B (its trials of the cell have no value of "+r.Metric+")")
	case r.GaveUp != "":
		return summary + "; B gave the cell up (" + r.GaveUp + ")"
	case r.UnfinishedB:
		return fmt.Sprintf("%s; B unfinished (n=%d of planned %s)", summary, len(r.XB), r.PlannedB)
	}
	return summary
}

// notMeasuredText is B's column of a row B did not measure the metric
// in (text), with that B gave the cell up or did not finish it.
func notMeasuredText(r Row, text string) string {
	switch {
	case r.GaveUp != "":
		return text + "; B gave the cell up (" + r.GaveUp + ")"
	case r.UnfinishedB:
		return fmt.Sprintf("%s; B unfinished (planned %s)", text, r.PlannedB)
	}
	return text
}

// belowZeroNote says why the B/A of a row whose A mean is below 0 is
// no ratio to read (a lost count that iperf3 lowered below 0): two
// negative means make B/A above 1 a fall.
const belowZeroNote = "B/A cannot be read as a ratio where A's mean is below 0: above 1 is B further below 0 " +
	"(a fall), below 1 a rise; read the change from the means (--fail-if judges it as (B − A)/|A|, docs/statistics.md)"

// methodNote says how the table's numbers were computed: the two runs'
// trials are independent (no rounds in common), so every comparison is
// unpaired. delta says a row fell back to the delta method, wide that a
// row's cell spreads widely in a run, disturbed that one counted
// disturbed trials, below that a row's A mean is below 0.
func methodNote(rows int, delta, wide, disturbed, below bool) string {
	n := fmt.Sprintf("n: trials per run. Means with Student t 95%% intervals; B/A with Fieller's 95%% interval "+
		"(unpaired: the runs share no rounds); p: Welch's two-sided t test, not corrected for multiple comparisons (%d rows; "+
		"--fail-if corrects its intervals with Bonferroni over the cells it judges).", rows)
	if delta {
		n += " \"delta\": A's mean cannot be told from 0 at 95%, so Fieller's set is unbounded; the row shows the delta " +
			"method's interval instead, an approximation that is poor there (docs/statistics.md)."
	}
	if wide {
		n += " \"spreads widely\": in that run the cell's trials spread far more than its other cells' of the same " +
			"workload and metric (an F test at 1% with Bonferroni, docs/statistics.md \"Trials that spread widely\"), so " +
			"the interval rests on trials worth reading in that run's report."
	}
	if disturbed {
		n += " \"disturbed\": trials of the cell in that run that the noise guard found disturbed (steal, other " +
			"processes' CPU or a short collector window beyond its bounds) and counted when its repeats were used up " +
			"(that run's \"Marked trials\"): their spread is in the interval."
	}
	if below {
		n += " \"A<0\": " + belowZeroNote + "."
	}
	return n
}
