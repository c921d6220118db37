package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// stopsTable is the adaptive repetitions' table: per cell the trials run,
// the precision reached against the target, why it stopped, and the
// decision against the baseline (or the first datapath) with its
// interval.
func stopsTable(m analysis.Model, s *study.Study) table {
	if singleTrials(m.Stops) {
		// Every row would read "1 (1 valid), no interval, max, -": the
		// header's count says it once.
		return table{}
	}
	d := Disturbed{analysis.CountedDisturbed(m.Marked), s}
	t := table{Head: []string{"cell", "n", "precision reached", "stopped on", "decision vs " + Versus(m.Stops, m.Baseline), "interval (confidence)", "why"}}
	for _, s := range m.Stops {
		why := s.Reason
		if s.Failed != "" {
			why = "not measured: " + s.Failed
		}
		if s.ToDecide > 0 {
			why += toDecideText(s.ToDecide)
		}
		if n := d.note(s.Cell, m.Stops); n != "" {
			why += "; " + n + ": Marked trials"
		}
		dec, iv := "-", "-"
		if s.Decision != "" {
			dec = s.Decision
			iv = stopInterval(s)
			if s.Look > 0 && s.Ratio != nil {
				iv += fmt.Sprintf(" after %d trials", s.Look)
			}
		}
		t.Rows = append(t.Rows, []string{CellName(s.Cell), fmt.Sprintf("%d (%d valid)", s.N, s.Valid),
			precisionText(s), s.Status, dec, iv, why})
	}
	return t
}

// singleTrials reports whether every cell ran one trial at most, as
// planned (not given up), and none was compared: nothing to tell a cell
// from another by.
// stopsShown reports whether the pages have a "Repetitions and
// decisions" table (stopsTable has rows): text that points to it says
// so only then (a run without stops.json has none).
func stopsShown(stops []results.Stop) bool { return len(stops) > 0 && !singleTrials(stops) }

func singleTrials(stops []results.Stop) bool {
	for _, s := range stops {
		if s.N > 1 || s.Failed != "" || s.Decision != "" || s.HalfWidth != nil {
			return false
		}
	}
	return len(stops) > 0
}

// toDecideText is an undecided cell's estimate of the trials a decision
// would take (results.Stop.ToDecide).
func toDecideText(n int) string {
	return fmt.Sprintf("; about %d trials would decide it if its difference and spread held", n)
}

// CellName names a cell as the run's end does: "flannel http baseline
// r=1", its impairment after it.
func CellName(c results.Cell) string {
	out := fmt.Sprintf("%s %s %s r=%d", c.Datapath, c.Workload, c.Tuning, c.Replicas)
	if c.Impairment != "" {
		out += " " + c.Impairment
	}
	return out
}

func precisionText(s results.Stop) string {
	got := "no interval"
	if s.HalfWidth != nil {
		got = "±" + pctApart(*s.HalfWidth, s.Target, 1) + "%"
	}
	if s.Target > 0 {
		return fmt.Sprintf("%s of %s %s (target ±%.1f%%)", got, s.Of, s.Metric, 100*s.Target)
	}
	return fmt.Sprintf("%s of %s %s", got, s.Of, s.Metric)
}

// pctApart is v in percent with decimals digits, and more where v,
// though not threshold, would read as it: a half-width of 0.0204 that
// missed a ±2.0% target is "2.04", not "2.0" as if it met it; one of
// 0.0196 that met it is "1.96". A threshold of 0 (none) adds none.
func pctApart(v, threshold float64, decimals int) string {
	f := func(x float64, d int) string { return strconv.FormatFloat(100*x, 'f', d, 64) }
	d := decimals
	for threshold > 0 && v != threshold && f(v, d) == f(threshold, d) && d < decimals+4 {
		d++
	}
	return f(v, d)
}

func stopInterval(s results.Stop) string {
	if s.Ratio == nil || s.Low == nil || s.High == nil {
		return "none"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] %s (%s)", *s.Ratio, *s.Low, *s.High, s.Method, stats.LevelText(s.Confidence))
}

const stopsCaption = "Repetitions (docs/statistics.md, \"Adaptive stopping\"): each cell ran interleaved rounds until " +
	"its precision target or its decision against the baseline (in a study of datapaths, against the first datapath) was reached (target), its maximum (max), or the budget (budget), or was given up (failed). " +
	"With a fixed count of trials every cell ran that count: target says the count met the precision target, max that it did not. " +
	"Decisions are made only at the planned looks (and once more at the count a cell stopped at between two of them: a closing look), " +
	"on intervals at the looks' stricter confidence, so the chance of a wrong " +
	"\"better\" or \"worse\" stays within 5% per cell over all looks (a run of K compared cells may hold up to 0.05·K wrong calls); " +
	"\"equal\" means within the margin."

// stopsText is the repetitions table's caption, with what deciding the
// undecided cells would take where that can be estimated.
func stopsText(m analysis.Model, s *study.Study) string {
	text := stopsCaption
	for _, st := range m.Stops {
		if st.Status == "target" && st.Target > 0 && st.N < m.TrialsPlanned {
			// A precision stop picks the moment the spread looked small.
			text += " " + precisionStopNote
			break
		}
	}
	if s == nil {
		return text
	}
	for _, l := range Next(m.Stops, s, m.Origin, m.MachineTime(), m.Unfinished, Disturbed{analysis.CountedDisturbed(m.Marked), s}) {
		if l.Line != "" {
			text += " " + strings.ToUpper(l.Line[:1]) + l.Line[1:] + "."
		}
		if l.Command != "" {
			text += " The command: " + l.Command
		}
	}
	return text
}

// NextStep is a line saying what to run after a run, and the command.
type NextStep struct{ Line, Command string }

// Next is what to run after a run: the rerun that decides its undecided
// cells and the profile that decides a one-trial tour; nothing for an
// unfinished run (analysis.Unfinished), whose stops cover only the cells
// it finished: UnfinishedLine says to resume it instead.
func Next(stops []results.Stop, s *study.Study, o *results.Origin, spent time.Duration, unfinished []results.Cell, d Disturbed) []NextStep {
	if len(unfinished) > 0 {
		return nil
	}
	rerun := RerunCommand(stops, s, o)
	budget := BudgetCommand(stops, s, o, spent)
	if rerun != "" {
		// The rerun's own budget covers what it narrows to.
		budget = ""
	}
	return []NextStep{
		{RerunLine(stops, s, d), rerun},
		{BudgetLine(stops, s, spent), budget},
		{TourLine(stops, s, o), TourCommand(stops, s, o)},
	}
}

// precisionStopNote warns that a cell stopped on its precision target has
// an optimistic plain interval.
const precisionStopNote = "A cell that stopped on its precision target before its maximum stopped when its trials happened to " +
	"spread little: its plain 95% interval covers the true value less often than 95% (about 90% in a simulation of ±2% targets on 3% noise; docs/statistics.md)."

// normNote says which decision a normalized table shows in an adaptive
// run.
const normNote = "Where the run decided a cell at its planned looks (an adaptive run), the cell shows that decision with its interval " +
	"at the looks' confidence (as in \"Repetitions and decisions\") after the plain 95% interval over every trial (the cell's first, " +
	"or the one after \"all trials at 95%\" when the plain comparison is paired), which is given without a verdict: " +
	"the trial count depended on the earlier looks, so it is no test of its own."

// markedTable lists the failed, repeated and disturbed attempts; g
// says which readings the run's engine could not take (notMeasured,
// where a plain "-" is an attempt that failed before it measured).
func markedTable(m analysis.Model, g guardView) table {
	t := table{Head: []string{"cell", "trial", "attempt", "counted", "steal %", "outside CPU %", "busy before %", "window %", "why"}}
	for _, k := range m.Marked {
		steal, out, busy, win := "-", "-", "-", "-"
		if n := k.Noise; n != nil {
			if n.WindowPct != nil {
				win = fmt.Sprintf("%.0f", *n.WindowPct)
			}
			steal = g.stealText(*n)
			if g.cluster {
				out, busy = notMeasured, notMeasured
			}
			if n.OutsidePct != nil {
				out = fmt.Sprintf("%.1f", *n.OutsidePct)
			}
			if n.BusyBeforePct != nil {
				busy = fmt.Sprintf("%.1f", *n.BusyBeforePct)
			}
		}
		t.Rows = append(t.Rows, []string{CellName(k.Cell), fmt.Sprint(k.Trial), fmt.Sprint(k.Attempt),
			map[bool]string{true: "yes", false: "no"}[k.Counted], steal, out, busy, win, k.Why})
	}
	return t
}

const markedCaption = "Attempts not counted (failed, or disturbed and repeated; a cell given up because its datapath's cluster or its pods " +
	"could not be set up has one row, \"its set-up failed\") and disturbed ones that counted because " +
	"their repeats were used up. Disturbed: mean steal time or CPU of processes outside the run above the noise guard's " +
	"thresholds, or collectors that recorded less of the planned window (window %) than its bound (spec.noise; docs/statistics.md, \"Noise guard\"). Nothing is dropped silently: every attempt stays in samples.jsonl."

// Versus names what a run's decisions compared its cells with: the
// baseline tuning, or in a study of datapaths the first datapath;
// fallback for runs whose stops.json does not say (they compared
// tunings) or when the stops name several.
func Versus(stops []results.Stop, fallback string) string {
	name := ""
	for _, s := range stops {
		switch {
		case s.Versus == "":
		case name == "":
			name = s.Versus
		case name != s.Versus:
			return fallback
		}
	}
	if name == "" {
		return fallback
	}
	return name
}

// StopVersus is what one stop's decision compared its cell with: its
// Versus, or the baseline tuning for a run whose stops.json does not say
// (recorded before it did; those runs compared tunings only).
func StopVersus(st results.Stop, baseline string) string {
	if st.Versus == "" {
		return baseline
	}
	return st.Versus
}

// DecisionLines says, one line per compared cell of a run, what was
// decided against the baseline (or the first datapath, Versus) or why it
// is undecided, and lists cells that could not be measured: the end of
// `cnibench run`. Cells undecided after a single trial share one line. A
// cell whose trials, or its reference's, were counted though disturbed
// says so (d).
func DecisionLines(stops []results.Stop, d Disturbed) []string {
	var out, few []string
	for _, s := range stops {
		v := lineVerdict(s)
		switch {
		case v == "":
		case v == "undecided" && s.N < 2 && s.Low == nil && s.VersusFailed == "":
			// A single trial (every cell of a one-trial quick profile):
			// one line for them all, not sixty alike.
			few = append(few, CellName(s.Cell))
		case v == notMeasuredVerdict:
			l := fmt.Sprintf("%s: not measured: %s", CellName(s.Cell), s.Failed)
			if s.Failed == "" {
				// The budget ran out before the cell's first trial.
				l = fmt.Sprintf("%s: not measured (%s): %s", CellName(s.Cell), s.Status, s.Reason)
			}
			out = append(out, l)
		case v == "undecided":
			l := fmt.Sprintf("%s: undecided after %d trials (%s): %s", CellName(s.Cell), s.N, s.Status, s.DecisionReason)
			if s.ToDecide > 0 {
				l += toDecideText(s.ToDecide)
			}
			l += versusFailed(s)
			if n := d.note(s.Cell, stops); n != "" {
				l += "; " + n
			}
			out = append(out, l)
		default:
			l := fmt.Sprintf("%s: %s, %s, n=%d", CellName(s.Cell), strings.ToUpper(s.Decision), stopInterval(s), s.N)
			if s.Status == "budget" && s.Look == s.N {
				l += " (judged when the budget stopped it)"
			}
			l += versusFailed(s)
			if n := d.note(s.Cell, stops); n != "" {
				l += "; " + n
			}
			out = append(out, l)
		}
	}
	if len(few) > 0 {
		out = append(out, fmt.Sprintf("%d undecided after a single trial, too few for an interval: %s", len(few), listSome(few, maxListed)))
	}
	return out
}

// versusFailed is "; " and why the cell's baseline (or first datapath)
// was given up, "" when it was not: the decision rests on the rounds
// before that, and no rerun is offered for the cell.
func versusFailed(s results.Stop) string {
	if s.VersusFailed == "" {
		return ""
	}
	return "; " + s.VersusFailed
}

// listSome joins the first most names and counts the rest.
func listSome(names []string, most int) string {
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

const notMeasuredVerdict = "not measured"

// lineVerdict is what DecisionLines says of a stop and DecisionTally
// counts: its decision, "not measured" for a cell given up or stopped by
// the budget before its first trial, "" for a cell compared with nothing.
func lineVerdict(s results.Stop) string {
	switch {
	case s.Failed != "", s.Decision != "" && s.N == 0:
		return notMeasuredVerdict
	}
	return s.Decision
}

// DecisionTally counts DecisionLines' cells by verdict, for the line
// above them: "3 worse, 1 equal, 2 undecided" (a default study of
// datapaths has some 60 lines to read).
func DecisionTally(stops []results.Stop) string {
	count := map[string]int{}
	for _, s := range stops {
		if v := lineVerdict(s); v != "" {
			count[v]++
		}
	}
	var out []string
	for _, v := range []string{"better", "worse", "equal", "undecided", notMeasuredVerdict} {
		if count[v] > 0 {
			out = append(out, fmt.Sprintf("%d %s", count[v], v))
		}
	}
	return strings.Join(out, ", ")
}

// maxListed bounds the cells PrecisionLines names one by one; the
// report's table has them all.
const maxListed = 8

// PrecisionLines says, for a run with a precision target, how many
// cells met the target and which did not, with the precision each
// reached: the end of `cnibench run`, beside DecisionLines (a cell of a
// datapath study may have stopped on either). Cells without an interval (fewer
// than two valid trials, as in a one-trial quick profile) are counted,
// not listed one by one.
func PrecisionLines(stops []results.Stop) []string {
	var miss []string
	met, judged, none, decided := 0, 0, 0, 0
	var target float64
	for _, s := range stops {
		if s.Target <= 0 || s.Failed != "" {
			continue
		}
		judged++
		target = s.Target
		switch {
		case s.HalfWidth != nil && *s.HalfWidth <= s.Target:
			met++
		case s.HalfWidth == nil:
			none++
		case s.Decision != "" && s.Status == "target":
			decided++ // stopped on its decision, listed by DecisionLines
		default:
			miss = append(miss, fmt.Sprintf("%s: %s after %d trials (%s)", CellName(s.Cell), precisionText(s), s.N, s.Status))
		}
	}
	if judged == 0 {
		return nil
	}
	if none == judged {
		// A one-trial tour: nothing was short of the target, there was
		// no interval to hold against it.
		return []string{fmt.Sprintf("precision target ±%.1f%%: not judged, none of the %d cells has an interval (fewer than 2 valid trials each)", 100*target, judged)}
	}
	head := fmt.Sprintf("precision target ±%.1f%%: met in %d of %d cells", 100*target, met, judged)
	if none > 0 {
		head += fmt.Sprintf("; %d without an interval (fewer than 2 valid trials)", none)
	}
	if decided > 0 {
		head += fmt.Sprintf("; %d stopped on their decision before it", decided)
	}
	out := []string{head}
	for i, l := range miss {
		if i == maxListed {
			out = append(out, fmt.Sprintf("  ... and %d more cells short of the target (the report's repetitions table)", len(miss)-maxListed))
			break
		}
		out = append(out, "  "+l)
	}
	return out
}

// DurationText rounds a machine time to what a reader plans with.
func DurationText(d time.Duration) string {
	switch {
	case d < 10*time.Minute:
		return study.ShortDuration(d.Round(time.Second))
	case d < 100*time.Minute:
		return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}
