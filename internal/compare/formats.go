package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/markdown"
	"github.com/cnibench/cnibench/internal/stats"
)

// Formats are the output formats of Write.
var Formats = []string{"md", "csv", "json"}

// Cells turns rows into the gate's view of them.
func Cells(rows []Row) []gate.Cell {
	out := make([]gate.Cell, len(rows))
	for i, r := range rows {
		d := analysis.Display(r.Metric)
		show := func(v float64) string {
			if d.Unit == "count" || d.Unit == "" {
				return d.Format(v)
			}
			return d.Format(v) + " " + d.Unit
		}
		out[i] = gate.Cell{Key: r.Key, Metric: r.Metric, A: r.XA, B: r.XB, Missing: r.Missing, Absent: r.Absent, NotMeasured: r.NotMeasured,
			GaveUp: r.GaveUp, MissingA: r.MissingA, AbsentA: r.AbsentA, GaveUpA: r.GaveUpA, NotMeasuredA: r.NotMeasuredA,
			Unfinished: r.UnfinishedB, PlannedB: r.PlannedB, Show: show}
	}
	return out
}

// Write renders rows (and the gate's verdicts, when rules were given) in
// format: md for people, csv and json for CI logs and scripts.
func Write(w io.Writer, format string, h Head, rows []Row, verdicts []gate.Verdict) error {
	switch format {
	case "", "md":
		if err := WriteMarkdown(w, h, rows); err != nil {
			return err
		}
		return writeVerdictsMarkdown(w, verdicts)
	case "csv":
		return writeCSV(w, rows, verdicts)
	case "json":
		return writeJSON(w, h, rows, verdicts)
	}
	return fmt.Errorf("unknown format %q (md, csv, json)", format)
}

func writeVerdictsMarkdown(w io.Writer, vs []gate.Verdict) error {
	if len(vs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\n| rule | cell | verdict | why |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, v := range vs {
		// The outcome CSV and JSON give: a cell the gate could not judge
		// is no "pass".
		verdict := strings.ReplaceAll(v.Outcome(), "_", " ")
		if v.Fail {
			verdict = "**FAIL**"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", markdown.Cell(v.Rule.Text), markdown.Cell(v.Cell.Key), verdict, markdown.Cell(v.Why)); err != nil {
			return err
		}
	}
	return nil
}

// rowVerdict is what the gate said of one row (cell and metric) over
// every rule of its metric: the rules it fails, its outcome (fail when
// any rule fails it; the rules of a metric share the level, and the
// relative ones the change and the interval, so pass or not_judged is
// one for all), and the verdict those numbers come from (its first
// rule's: an absolute rule's change is B − A).
type rowVerdict struct {
	failed  []string
	outcome string
	v       gate.Verdict
}

// verdictsByRow maps cell key + metric to what the gate said of it.
func verdictsByRow(vs []gate.Verdict) map[string]*rowVerdict {
	m := map[string]*rowVerdict{}
	for _, v := range vs {
		k := rowKey(v.Cell.Key, v.Cell.Metric)
		rv := m[k]
		if rv == nil {
			rv = &rowVerdict{outcome: v.Outcome(), v: v}
			m[k] = rv
		}
		if v.Fail {
			rv.failed = append(rv.failed, v.Rule.Text)
			rv.outcome = gate.OutcomeFail
		}
	}
	return m
}

func rowKey(cell, metric string) string { return cell + "\x00" + metric }

// gateNums are a row's level, change and interval bounds of B/A as the
// gate judged them, NaN without a verdict or where it has none; for an
// absolute rule the change is B − A in the metric's unit, and the bounds
// of B/A are NaN (diffBounds has B − A's).
func (rv *rowVerdict) gateNums() (level, change, low, high, p float64) {
	if rv == nil || !rv.v.Judged {
		nan := math.NaN()
		return nan, nan, nan, nan, nan
	}
	if rv.v.Rule.Absolute {
		return rv.v.Level, rv.v.Change, math.NaN(), math.NaN(), rv.v.P
	}
	return rv.v.Level, rv.v.Change, rv.v.Low, rv.v.High, rv.v.P
}

// diffBounds are the bounds of B − A an absolute rule judged, NaN for
// any other verdict.
func diffBounds(v gate.Verdict) (low, high float64) {
	if !v.Judged || !v.Rule.Absolute {
		return math.NaN(), math.NaN()
	}
	return v.Low, v.High
}

// SchemaVersion is the version of compare's JSON (schema_version) and
// of its CSV's columns: 2 added absent_in_b and the gate's verdict,
// level, change and interval per row and per verdict; 3 added the cells
// A has no trial of (missing_a; per row missing_in_a, absent_in_a,
// gave_up_a, and the same CSV columns at the end) and made every JSON
// key always present, an empty value where 2 left it out; 4 added B's
// cells A's study leaves out (left_out_a, the JSON alone); 5 added the
// cells neither run has a counted trial of (neither, the JSON alone); 6
// added the rows of cells whose counted trials in A lack a metric B has
// there (not_measured_in_a, per row and as the CSV's last column) and
// the metrics compared that one run has in no cell (metrics_not_in_b,
// metrics_not_in_a, the JSON alone), and absolute rules (a verdict's
// absolute, diff_low and diff_high); 7 added, per row and as the CSV's
// last columns, unfinished_in_a and unfinished_in_b with planned_a and
// planned_b (a row's cell that a run ended before finishing, which only
// the header's counts and the verdict's why said). A version only adds
// fields; a reader of an older one reads a newer one unchanged.
const SchemaVersion = 7

// ci is a side as the CSV and JSON give it: one trial has no interval,
// not one of zero width at its mean.
func ci(s stats.Summary) stats.Summary {
	if s.N < 2 {
		s.CI95Low, s.CI95High = math.NaN(), math.NaN()
	}
	return s
}

// bounds is a ratio as the CSV and JSON give it: without an interval
// (method none: a side of fewer than two trials) it has no bounds.
func bounds(r stats.RatioCI) stats.RatioCI {
	if r.Method == stats.MethodNone {
		r.Low, r.High = math.NaN(), math.NaN()
	}
	return r
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// csvHeader are the CSV's columns; the ones after gave_up_b came with
// SchemaVersion 2 (the gate's columns are empty without --fail-if),
// missing_in_a, absent_in_a and gave_up_a with 3, not_measured_in_a
// and the gate's absolute, diff_low and diff_high with 6 (without them
// a script could not tell whether gate_change is a fraction or B − A in
// the metric's unit: the row's first rule decides), unfinished_in_a,
// unfinished_in_b, planned_a and planned_b with 7.
var csvHeader = []string{"cell", "metric", "n_a", "mean_a", "ci_low_a", "ci_high_a", "n_b", "mean_b", "ci_low_b", "ci_high_b",
	"ratio", "ratio_low", "ratio_high", "ratio_method", "p_welch", "missing_in_b", "failed_rules", "wide_a", "wide_b",
	"disturbed_a", "disturbed_b", "not_measured_in_b", "gave_up_b",
	"absent_in_b", "verdict", "gate_level", "gate_change", "gate_ratio_low", "gate_ratio_high", "gate_p_welch",
	"missing_in_a", "absent_in_a", "gave_up_a", "not_measured_in_a", "gate_absolute", "gate_diff_low", "gate_diff_high",
	"unfinished_in_a", "unfinished_in_b", "planned_a", "planned_b"}

func writeCSV(w io.Writer, rows []Row, vs []gate.Verdict) error {
	cw := csv.NewWriter(w)
	byRow := verdictsByRow(vs)
	_ = cw.Write(csvHeader)
	for _, r := range rows {
		rv := byRow[rowKey(r.Key, r.Metric)]
		var rules []string
		outcome := ""
		if rv != nil {
			rules, outcome = rv.failed, rv.outcome
		}
		level, change, low, high, p := rv.gateNums()
		absolute, dlow, dhigh := "", math.NaN(), math.NaN()
		if rv != nil && rv.v.Judged {
			absolute = strconv.FormatBool(rv.v.Rule.Absolute)
			dlow, dhigh = diffBounds(rv.v)
		}
		_ = cw.Write([]string{r.Key, r.Metric,
			strconv.Itoa(r.A.N), num(r.A.Mean), num(ci(r.A).CI95Low), num(ci(r.A).CI95High),
			strconv.Itoa(r.B.N), num(r.B.Mean), num(ci(r.B).CI95Low), num(ci(r.B).CI95High),
			num(r.Ratio.Ratio), num(bounds(r.Ratio).Low), num(bounds(r.Ratio).High), string(r.Ratio.Method), num(r.P), strconv.FormatBool(r.Missing),
			strings.Join(rules, "; "),
			strconv.FormatBool(r.WideA), strconv.FormatBool(r.WideB), strconv.Itoa(r.DisturbedA), strconv.Itoa(r.DisturbedB),
			strconv.FormatBool(r.NotMeasured), r.GaveUp,
			string(r.Absent), outcome, num(level), num(change), num(low), num(high), num(p),
			strconv.FormatBool(r.MissingA), string(r.AbsentA), r.GaveUpA, strconv.FormatBool(r.NotMeasuredA),
			absolute, num(dlow), num(dhigh),
			strconv.FormatBool(r.UnfinishedA), strconv.FormatBool(r.UnfinishedB), r.PlannedA, r.PlannedB})
	}
	cw.Flush()
	return cw.Error()
}

// jsonNum is a number that is null when undefined (JSON has no NaN).
type jsonNum float64

func (n jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

type jsonSide struct {
	N    int     `json:"n"`
	Mean jsonNum `json:"mean"`
	Low  jsonNum `json:"ci_low"`
	High jsonNum `json:"ci_high"`
}

type jsonRow struct {
	Cell        string   `json:"cell"`
	Metric      string   `json:"metric"`
	A           jsonSide `json:"a"`
	B           jsonSide `json:"b"`
	Ratio       jsonNum  `json:"ratio"`
	RatioLow    jsonNum  `json:"ratio_low"`
	RatioHigh   jsonNum  `json:"ratio_high"`
	RatioMethod string   `json:"ratio_method"`
	P           jsonNum  `json:"p_welch"`
	MissingInB  bool     `json:"missing_in_b"`
	FailedRules []string `json:"failed_rules"`
	// WideA and WideB: the cell's trials spread widely in that run.
	WideA bool `json:"wide_a"`
	WideB bool `json:"wide_b"`
	// DisturbedA and DisturbedB: the cell's trials counted though
	// disturbed in that run.
	DisturbedA int `json:"disturbed_a"`
	DisturbedB int `json:"disturbed_b"`
	// NotMeasuredInB: B's trials of the cell lack the metric; GaveUpB:
	// why B's runner gave the cell up.
	NotMeasuredInB bool   `json:"not_measured_in_b"`
	GaveUpB        string `json:"gave_up_b"`
	// AbsentInB says why B has no value (gate.Absence) when MissingInB;
	// Verdict is the gate's outcome on the row (fail, pass, not_judged)
	// under --fail-if.
	AbsentInB string `json:"absent_in_b"`
	Verdict   string `json:"verdict"`
	// MissingInA, AbsentInA and GaveUpA: the same of A, for a cell of B
	// that A has no counted trial of (Row.MissingA).
	MissingInA bool   `json:"missing_in_a"`
	AbsentInA  string `json:"absent_in_a"`
	GaveUpA    string `json:"gave_up_a"`
	// NotMeasuredInA: A's counted trials of the cell lack the metric B
	// has there (Row.NotMeasuredA).
	NotMeasuredInA bool `json:"not_measured_in_a"`
	// UnfinishedInA and UnfinishedInB: that run ended before it finished
	// the cell (Row.UnfinishedA, Row.UnfinishedB), which was to have
	// PlannedA or PlannedB trials ("5", "3 to 10"; "" for a finished
	// cell). Not unfinished_a and unfinished_b: the document's keys of
	// those names count cells.
	UnfinishedInA bool   `json:"unfinished_in_a"`
	UnfinishedInB bool   `json:"unfinished_in_b"`
	PlannedA      string `json:"planned_a"`
	PlannedB      string `json:"planned_b"`
}

// jsonVerdict is one rule's verdict on one cell: its outcome, and the
// level, change and interval of B/A it was judged on (null where it has
// none: not judged, or Welch's p decided).
type jsonVerdict struct {
	Rule      string  `json:"rule"`
	Cell      string  `json:"cell"`
	Metric    string  `json:"metric"`
	Verdict   string  `json:"verdict"`
	Fail      bool    `json:"fail"`
	Level     jsonNum `json:"level"`
	Change    jsonNum `json:"change"`
	RatioLow  jsonNum `json:"ratio_low"`
	RatioHigh jsonNum `json:"ratio_high"`
	P         jsonNum `json:"p_welch"`
	Why       string  `json:"why"`
	// Absolute: the rule's threshold has no %, and it judged B − A in
	// the metric's unit (change is that difference, diff_low and
	// diff_high its interval at level, the ratio's bounds null).
	Absolute bool    `json:"absolute"`
	DiffLow  jsonNum `json:"diff_low"`
	DiffHigh jsonNum `json:"diff_high"`
}

func newJSONVerdict(v gate.Verdict) jsonVerdict {
	level, change, low, high, p := (&rowVerdict{v: v}).gateNums()
	dlow, dhigh := diffBounds(v)
	return jsonVerdict{Rule: v.Rule.Text, Cell: v.Cell.Key, Metric: v.Cell.Metric, Verdict: v.Outcome(), Fail: v.Fail,
		Level: jsonNum(level), Change: jsonNum(change), RatioLow: jsonNum(low), RatioHigh: jsonNum(high), P: jsonNum(p), Why: v.Why,
		Absolute: v.Rule.Absolute, DiffLow: jsonNum(dlow), DiffHigh: jsonNum(dhigh)}
}

// jsonDoc is compare's JSON. Every key is always present (an empty
// list, false, 0, "" or null when there is nothing to say), so that a
// reader with a strict schema finds the documented keys in every
// document; schema 3 made them so (2 left out the empty ones).
type jsonDoc struct {
	SchemaVersion int    `json:"schema_version"`
	A             string `json:"a"`
	B             string `json:"b"`
	AboutA        string `json:"about_a"`
	AboutB        string `json:"about_b"`
	// What each run holds, for a tool to say why no row matched.
	HoldsA string `json:"holds_a"`
	HoldsB string `json:"holds_b"`
	// Cells a run ended before finishing (partial numbers).
	UnfinishedA int `json:"unfinished_a"`
	UnfinishedB int `json:"unfinished_b"`
	// LeftOutB: A's cells B's study leaves out, and LeftOutA: B's cells
	// A's study leaves out, neither compared nor failed; Neither: cells
	// both studies include that neither run has a counted trial of, not
	// compared nor failed either; MissingA: B's cells A has no trial of,
	// which fail a gate.
	LeftOutB []string `json:"left_out_b"`
	LeftOutA []string `json:"left_out_a"`
	Neither  []string `json:"neither"`
	MissingA []string `json:"missing_a"`
	// MetricsNotInB: the metrics compared that B has no value of in any
	// cell, with the count of A's cells that have each, and whether a
	// gate judges it; MetricsNotInA the other way round (Head.InANotB,
	// Head.InBNotA).
	MetricsNotInB []jsonOneRun  `json:"metrics_not_in_b"`
	MetricsNotInA []jsonOneRun  `json:"metrics_not_in_a"`
	Differ        []string      `json:"differ"`
	SameRun       bool          `json:"same_run"`
	Rows          []jsonRow     `json:"rows"`
	OneCore       []Bound       `json:"one_core"`
	Verdicts      []jsonVerdict `json:"verdicts"`
	Failed        bool          `json:"failed"`
}

// list is names as JSON gives them: [] for none, never null.
func list(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

func writeJSON(w io.Writer, h Head, rows []Row, vs []gate.Verdict) error {
	byRow := verdictsByRow(vs)
	bound := h.Bound
	if bound == nil {
		bound = []Bound{}
	}
	doc := jsonDoc{SchemaVersion: SchemaVersion, A: h.A, B: h.B, AboutA: h.AboutA, AboutB: h.AboutB, HoldsA: h.HoldsA, HoldsB: h.HoldsB,
		UnfinishedA: h.UnfinishedA, UnfinishedB: h.UnfinishedB, LeftOutB: list(h.LeftOutB), LeftOutA: list(h.LeftOutA), Neither: list(h.Neither),
		MissingA: MissingA(rows), MetricsNotInB: jsonOneRuns(h.InANotB), MetricsNotInA: jsonOneRuns(h.InBNotA), Differ: list(h.Differ),
		SameRun: h.Same, Rows: []jsonRow{}, OneCore: bound, Verdicts: []jsonVerdict{}, Failed: gate.Failed(vs)}
	for _, r := range rows {
		rv := byRow[rowKey(r.Key, r.Metric)]
		failed := []string{}
		outcome := ""
		if rv != nil {
			failed, outcome = list(rv.failed), rv.outcome
		}
		doc.Rows = append(doc.Rows, jsonRow{Cell: r.Key, Metric: r.Metric,
			A:     jsonSide{r.A.N, jsonNum(r.A.Mean), jsonNum(ci(r.A).CI95Low), jsonNum(ci(r.A).CI95High)},
			B:     jsonSide{r.B.N, jsonNum(r.B.Mean), jsonNum(ci(r.B).CI95Low), jsonNum(ci(r.B).CI95High)},
			Ratio: jsonNum(r.Ratio.Ratio), RatioLow: jsonNum(bounds(r.Ratio).Low), RatioHigh: jsonNum(bounds(r.Ratio).High),
			RatioMethod: string(r.Ratio.Method), P: jsonNum(r.P), MissingInB: r.Missing, FailedRules: failed,
			WideA: r.WideA, WideB: r.WideB, DisturbedA: r.DisturbedA, DisturbedB: r.DisturbedB, NotMeasuredInB: r.NotMeasured, GaveUpB: r.GaveUp,
			AbsentInB: string(r.Absent), Verdict: outcome, MissingInA: r.MissingA, AbsentInA: string(r.AbsentA), GaveUpA: r.GaveUpA,
			NotMeasuredInA: r.NotMeasuredA, UnfinishedInA: r.UnfinishedA, UnfinishedInB: r.UnfinishedB, PlannedA: r.PlannedA, PlannedB: r.PlannedB})
	}
	for _, v := range vs {
		doc.Verdicts = append(doc.Verdicts, newJSONVerdict(v))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
