package analysis

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// CSVHeader is summary.csv's header: one tidy row per cell, metric and
// core. Columns are only ever added at the end, so scripts that read
// them by position keep working.
var CSVHeader = []string{
	"datapath", "tuning", "workload", "replicas", "metric", "cpu", "unit", "n",
	"mean", "sd", "ci95_low", "ci95_high",
	"normalized", "normalized_ci95_low", "normalized_ci95_high",
	"p_vs_baseline", "p_vs_first_datapath", "impairment",
	// Paired analysis (paired.go), against the baseline tuning and then
	// against the first datapath.
	"paired_ratio", "paired_ci95_low", "paired_ci95_high", "paired_n",
	"chosen_low", "chosen_high", "chosen_method", "decision", "decision_reason",
	"dp_paired_ratio", "dp_paired_ci95_low", "dp_paired_ci95_high", "dp_paired_n",
	"dp_chosen_low", "dp_chosen_high", "dp_chosen_method", "dp_decision", "dp_decision_reason",
	// The adaptive controller's decision against the baseline (stops.json):
	// at the look it was judged at, with that look's confidence. In an
	// adaptive run this, not "decision", is the valid test.
	"seq_decision", "seq_ratio", "seq_low", "seq_high", "seq_method", "seq_confidence", "seq_look",
	// What seq_decision compared the cell with: the baseline tuning, or
	// in a study of datapaths the first datapath (as "dp_decision");
	// empty in runs from before stops.json recorded it (the baseline).
	"seq_versus",
	// How the mean's interval and the normalized one were obtained, as
	// summary.json's ci_method and normalized_method: student-t or none;
	// fieller, delta, none or baseline-own (empty where not normalized).
	"ci_method", "normalized_method",
	// The rounds the paired intervals left out (a side missing, or cut
	// by a resume), against the baseline tuning and the first datapath;
	// empty where a comparison was not paired at all.
	"paired_incomplete", "dp_paired_incomplete",
}

// WriteCSV writes rows as summary.csv, with the controller's decisions
// from stops (nil for none) beside the rows they judge; trials is the
// run's design (Model.Trials), whose fixed count has no decision of its
// own to show there (Decisions). Values keep the metric's raw unit
// (bitrates in bit/s) at full precision; cpu is empty for metrics that are
// not per core, the normalized fields are empty where not applicable, and
// any undefined statistic (n = 0, sd and the interval with n = 1, a p
// value without two observations on each side) is empty, not "NaN".
func WriteCSV(w io.Writer, rows []Row, stops []results.Stop, trials study.Trials) error {
	seq := Decisions(stops, trials)
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rows {
		cpu := ""
		if r.CPU >= 0 {
			cpu = strconv.Itoa(r.CPU)
		}
		rec := []string{
			r.Datapath, r.Tuning, r.Workload, strconv.Itoa(r.Replicas), r.Metric, cpu, r.Unit,
			strconv.Itoa(r.N), num(r.Mean), num(r.SD), num(r.CI95Low), num(r.CI95High),
			"", "", "", num(r.PBaseline), num(r.PFirstDatapath), r.Impairment,
		}
		if r.N < 2 {
			// One trial has no interval: bounds equal to the mean would
			// read as a zero-width CI.
			rec[10], rec[11] = "", ""
		}
		if r.HasNorm {
			rec[12] = num(r.Normalized)
		}
		// Bounds only where an interval was estimated: without one they
		// equal the point, which a script would read as a zero-width CI.
		if NormHasCI(r) {
			rec[13], rec[14] = num(r.NormCI95Low), num(r.NormCI95High)
		}
		st, decided := seq[Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU}]
		why := supersededWhy(st)
		rec = append(rec, pairCols(r.VsBaseline, decided && (st.Versus == "" || r.VsBaseline != nil && st.Versus == r.VsBaseline.Against), why)...)
		rec = append(rec, pairCols(r.VsFirstDatapath, decided && r.VsFirstDatapath != nil && st.Versus == r.VsFirstDatapath.Against, why)...)
		rec = append(rec, seqCols(st, decided)...)
		rec = append(rec, r.CIMethod, r.NormMethod, incompleteCol(r.VsBaseline), incompleteCol(r.VsFirstDatapath))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func num(v float64) string {
	if !Finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// SupersededReason is summary.csv's decision_reason where the adaptive
// controller judged the cell at a look against the same reference
// (seq_decision; before any look, supersededWhy):
// the plain 95% verdict is left empty there, as the report gives it no
// verdict either, so that a script reading "decision" cannot take a
// test that does not hold for that design for the run's answer.
const SupersededReason = "adaptive run: the decision is seq_decision; a plain 95% test of all trials does not hold when earlier looks chose the trial count"

// supersededWhy is decision_reason on a row the controller's stop st
// judged: SupersededReason after a look; for a cell stopped before its
// first look (by the budget, or given up, before min trials) the stop's
// own reason ("no decision before 3 trials"), as the report gives it
// (report's lookText): no look chose its trial count, and none decided.
func supersededWhy(st results.Stop) string {
	if st.Look == 0 && st.DecisionReason != "" {
		return st.DecisionReason
	}
	return SupersededReason
}

// pairCols are a Pair's summary.csv columns, empty when p is nil. With
// superseded, the controller judged the cell against p's reference:
// the interval stays and the plain verdict gives way to why
// (supersededWhy).
func pairCols(p *Pair, superseded bool, why string) []string {
	if p == nil {
		return make([]string, 9)
	}
	pn := ""
	if p.Paired.N > 0 {
		pn = strconv.Itoa(p.Paired.N)
	}
	// As for the normalized bounds: empty where the method is none.
	pl, ph, cl, ch := "", "", "", ""
	if hasInterval(p.Paired.RatioCI) {
		pl, ph = num(p.Paired.Low), num(p.Paired.High)
	}
	if hasInterval(p.Chosen.RatioCI) {
		cl, ch = num(p.Chosen.Low), num(p.Chosen.High)
	}
	verdict, reason := string(p.Decision.Verdict), p.Decision.Reason
	if superseded {
		verdict, reason = "", why
	}
	return []string{
		num(p.Paired.Ratio), pl, ph, pn,
		cl, ch, string(p.Chosen.Method), verdict, reason,
	}
}

// incompleteCol is a Pair's paired_incomplete column: empty without a
// comparison, or for one that paired no round at all (UnpairedOf: its
// rounds are no pairs to leave out, as its paired_n is empty).
func incompleteCol(p *Pair) string {
	if p == nil || p.Paired.N+p.Paired.Incomplete == 0 {
		return ""
	}
	return strconv.Itoa(p.Paired.Incomplete)
}

// seqCols are the controller's decision st for a row, empty where it
// made none (!ok).
func seqCols(st results.Stop, ok bool) []string {
	if !ok {
		return make([]string, 8)
	}
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return num(*p)
	}
	look := ""
	if st.Look > 0 {
		look = strconv.Itoa(st.Look)
	}
	return []string{st.Decision, f(st.Ratio), f(st.Low), f(st.High), st.Method, num(st.Confidence), look, st.Versus}
}

// Decisions indexes the controller's decisions (stops that made one) by
// the row they judge: the cell's metric, not per core. A fixed design's
// one look judges all the cell's trials at 95%, which is the row's own
// comparison: such stops are left out, so that a report shows that
// decision once and summary.csv's seq_ columns stay those of looks. So
// is a fixed design's stop without a look (the budget stopped the cell
// after one trial, or its first trial failed every attempt): its
// "undecided" says nothing the row's own comparison does not, and would
// stand in for it. trials is the run's design (Model.Trials); where it
// is unknown (zero) a stop with a look at 95% is taken for a fixed
// design's, one without a look for an adaptive one's.
func Decisions(stops []results.Stop, trials study.Trials) map[Key]results.Stop {
	out := map[Key]results.Stop{}
	if trials.Max > 0 && !trials.Adaptive() {
		return out
	}
	for _, st := range stops {
		if st.Decision != "" && !(st.Look > 0 && st.Confidence <= stats.Confidence+1e-9) {
			out[Key{Cell: st.Cell, Metric: st.Metric, CPU: -1}] = st
		}
	}
	return out
}
