package report

// The cells of the "Datapaths side by side" tables (datapaths.go): each
// datapath's mean, and beside every datapath but the first its comparison
// with the first, as the other tables give a comparison (method, count,
// decision), or the controller's decision at its look.

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// rows are a datapath table's rows: per datapath, each workload's mean
// [95% CI] and, beside every datapath but the first, the comparison with
// the first: the adaptive controller's decision at its looks where it
// made one (as the normalized tables show a tuning's), else the decided
// ratio where the model made one (Row.VsFirstDatapath: bitrate, the
// request/response rates and latencies), else Welch's p.
func (c dpComparison) rows() [][]string {
	var out [][]string
	for _, dp := range c.Datapaths {
		line := []string{dp}
		for _, wl := range c.Workloads {
			r, ok := c.row(dp, wl)
			if !ok {
				mark := "—"
				if c.empty(dp, wl) {
					mark = c.absent(results.Cell{Datapath: dp, Tuning: c.Tuning, Workload: wl, Replicas: c.Replicas})
				}
				line = append(line, mark)
				continue
			}
			cell := analysis.Display(r.Metric).MeanCI(r) + c.nText(r) + c.paper(r)
			if st, ok := c.decided[analysis.Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU}]; ok && st.Versus == c.Datapaths[0] {
				cell += "; " + lookDecision(st)
			} else if v := r.VsFirstDatapath; v != nil {
				ref, _ := c.row(c.Datapaths[0], wl)
				cell += "; " + versusFirst(v, r.N, ref.N)
			} else if p := analysis.FormatP(r.PFirstDatapath); p != "" {
				cell += "; p" + p
			}
			if mk := c.marks(r); mk != "" {
				cell += " (" + mk + ")"
			}
			line = append(line, cell)
		}
		out = append(out, line)
	}
	return out
}

// marks are a cell's marks as the glance puts them on its cells
// (spreadNote, disturbedMark): "wide spread" or "two groups", and
// "disturbed"; "" for none. They say the cell's decision rests on trials
// worth reading, which the Repetitions table and the run's end say of
// the cell but a reader of this table would not see.
func (c dpComparison) marks(r analysis.Row) string {
	mk := spreadNote(r)
	if c.countedDisturbed(r.Cell) {
		mk += disturbedNote
	}
	return strings.TrimPrefix(mk, ", ")
}

// countedDisturbed reports whether cell's counted trials, or those of the
// first datapath's cell it is compared with, include some counted though
// disturbed (Disturbed.note's rule, with this table's reference: every
// decision here is against the first datapath, whatever else the study
// compares).
func (c dpComparison) countedDisturbed(cell results.Cell) bool {
	ref := cell
	ref.Datapath = c.Datapaths[0]
	return c.disturbed[cell] > 0 || c.disturbed[ref] > 0
}

// lookDecision is the controller's decision against the first datapath,
// its interval as the repetitions table gives it (stopInterval: method
// and the look's confidence): "×0.869 [0.801, 0.942] paired-t (98.75%),
// at the look after 3 trials: worse". A cell stopped before the first
// look (by the budget) has no decision, only the plain interval over its
// trials: "×0.918 [0.619, 1.351] fieller (95%), 2 trials; undecided: no
// decision before 3 trials".
func lookDecision(st results.Stop) string {
	if st.Ratio == nil || st.Low == nil || st.High == nil {
		return fmt.Sprintf("%s (%s)", st.Decision, st.DecisionReason)
	}
	if st.Look == 0 {
		return fmt.Sprintf("×%s, %d trials; %s: %s", stopInterval(st), st.N, st.Decision, st.DecisionReason)
	}
	return fmt.Sprintf("×%s, at the look after %d trials: %s", stopInterval(st), st.Look, st.Decision)
}

// versusFirst is a datapath's ratio to the first datapath as the other
// tables give a comparison (analysis.DecisionText): the interval decided
// on, its method, what it rests on and the decision, "×0.869 [0.812,
// 0.930] paired-t, 6 pairs: worse" or, where the rounds did not pair
// (too few complete, or datapaths run one after another), "×0.869
// [0.80, 0.94] fieller, n=2 vs host's 10: worse". n is the cell's trial
// count and refN the first datapath's. A cell of one trial, whose mean
// already says "(n=1, no CI)", shows the bare ratio: in a one-trial tour
// every cell would repeat why it has no decision.
//
// Without an interval the cell says why in words a reader can act on
// (the first datapath's mean is 0: it moved nothing in those trials;
// its interval reaches 0) rather than "×NaN".
func versusFirst(v *analysis.Pair, n, refN int) string {
	c := v.Chosen
	if c.Method == stats.MethodNone || math.IsNaN(c.Low) || math.IsNaN(c.High) {
		ratio := "no ratio"
		if analysis.Finite(c.Ratio) {
			ratio = fmt.Sprintf("×%.3f", c.Ratio)
		}
		if n < 2 {
			return ratio
		}
		why := "fewer than 2 trials on a side"
		switch {
		case !analysis.Finite(c.Ratio):
			why = v.Against + "'s mean is 0"
		case v.Unpaired.Method == stats.MethodDelta:
			why = v.Against + "'s interval reaches 0"
		}
		return fmt.Sprintf("%s, %s: %s (no interval: %s)", ratio, analysis.PairCount(v, n, refN), v.Decision.Verdict, why)
	}
	return "×" + analysis.DecisionText(v, n, refN)
}
