package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

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
		out[i] = gate.Cell{Key: r.Key, Metric: r.Metric, A: r.XA, B: r.XB, Missing: r.Missing, NotMeasured: r.NotMeasured,
			GaveUp: r.GaveUp, Show: show}
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
		verdict := "pass"
		if v.Fail {
			verdict = "**FAIL**"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s |\n", markdown.Cell(v.Rule.Text), markdown.Cell(v.Cell.Key), verdict, markdown.Cell(v.Why)); err != nil {
			return err
		}
	}
	return nil
}

// failures maps cell key + metric to the rules it fails.
func failures(vs []gate.Verdict) map[string][]string {
	m := map[string][]string{}
	for _, v := range vs {
		if v.Fail {
			k := v.Cell.Key + "\x00" + v.Cell.Metric
			m[k] = append(m[k], v.Rule.Text)
		}
	}
	return m
}

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

func writeCSV(w io.Writer, rows []Row, vs []gate.Verdict) error {
	cw := csv.NewWriter(w)
	fail := failures(vs)
	_ = cw.Write([]string{"cell", "metric", "n_a", "mean_a", "ci_low_a", "ci_high_a", "n_b", "mean_b", "ci_low_b", "ci_high_b",
		"ratio", "ratio_low", "ratio_high", "ratio_method", "p_welch", "missing_in_b", "failed_rules", "wide_a", "wide_b",
		"disturbed_a", "disturbed_b", "not_measured_in_b", "gave_up_b"})
	for _, r := range rows {
		rules := ""
		for i, t := range fail[r.Key+"\x00"+r.Metric] {
			if i > 0 {
				rules += "; "
			}
			rules += t
		}
		_ = cw.Write([]string{r.Key, r.Metric,
			strconv.Itoa(r.A.N), num(r.A.Mean), num(ci(r.A).CI95Low), num(ci(r.A).CI95High),
			strconv.Itoa(r.B.N), num(r.B.Mean), num(ci(r.B).CI95Low), num(ci(r.B).CI95High),
			num(r.Ratio.Ratio), num(bounds(r.Ratio).Low), num(bounds(r.Ratio).High), string(r.Ratio.Method), num(r.P), strconv.FormatBool(r.Missing), rules,
			strconv.FormatBool(r.WideA), strconv.FormatBool(r.WideB), strconv.Itoa(r.DisturbedA), strconv.Itoa(r.DisturbedB),
			strconv.FormatBool(r.NotMeasured), r.GaveUp})
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
	MissingInB  bool     `json:"missing_in_b,omitempty"`
	FailedRules []string `json:"failed_rules,omitempty"`
	// WideA and WideB: the cell's trials spread widely in that run.
	WideA bool `json:"wide_a,omitempty"`
	WideB bool `json:"wide_b,omitempty"`
	// DisturbedA and DisturbedB: the cell's trials counted though
	// disturbed in that run.
	DisturbedA int `json:"disturbed_a,omitempty"`
	DisturbedB int `json:"disturbed_b,omitempty"`
	// NotMeasuredInB: B's trials of the cell lack the metric; GaveUpB:
	// why B's runner gave the cell up.
	NotMeasuredInB bool   `json:"not_measured_in_b,omitempty"`
	GaveUpB        string `json:"gave_up_b,omitempty"`
}

type jsonVerdict struct {
	Rule string `json:"rule"`
	Cell string `json:"cell"`
	Fail bool   `json:"fail"`
	Why  string `json:"why"`
}

func writeJSON(w io.Writer, h Head, rows []Row, vs []gate.Verdict) error {
	fail := failures(vs)
	doc := struct {
		A      string `json:"a"`
		B      string `json:"b"`
		AboutA string `json:"about_a,omitempty"`
		AboutB string `json:"about_b,omitempty"`
		// What each run holds, for a tool to say why no row matched.
		HoldsA string `json:"holds_a"`
		HoldsB string `json:"holds_b"`
		// Cells a run ended before finishing (partial numbers).
		UnfinishedA int           `json:"unfinished_a,omitempty"`
		UnfinishedB int           `json:"unfinished_b,omitempty"`
		Differ      []string      `json:"differ,omitempty"`
		SameRun     bool          `json:"same_run,omitempty"`
		Rows        []jsonRow     `json:"rows"`
		OneCore     []Bound       `json:"one_core,omitempty"`
		Verdicts    []jsonVerdict `json:"verdicts,omitempty"`
		Failed      bool          `json:"failed"`
	}{A: h.A, B: h.B, AboutA: h.AboutA, AboutB: h.AboutB, HoldsA: h.HoldsA, HoldsB: h.HoldsB, UnfinishedA: h.UnfinishedA, UnfinishedB: h.UnfinishedB, Differ: h.Differ, SameRun: h.Same, Rows: []jsonRow{}, OneCore: h.Bound, Failed: gate.Failed(vs)}
	for _, r := range rows {
		doc.Rows = append(doc.Rows, jsonRow{Cell: r.Key, Metric: r.Metric,
			A:     jsonSide{r.A.N, jsonNum(r.A.Mean), jsonNum(ci(r.A).CI95Low), jsonNum(ci(r.A).CI95High)},
			B:     jsonSide{r.B.N, jsonNum(r.B.Mean), jsonNum(ci(r.B).CI95Low), jsonNum(ci(r.B).CI95High)},
			Ratio: jsonNum(r.Ratio.Ratio), RatioLow: jsonNum(bounds(r.Ratio).Low), RatioHigh: jsonNum(bounds(r.Ratio).High),
			RatioMethod: string(r.Ratio.Method), P: jsonNum(r.P), MissingInB: r.Missing, FailedRules: fail[r.Key+"\x00"+r.Metric],
			WideA: r.WideA, WideB: r.WideB, DisturbedA: r.DisturbedA, DisturbedB: r.DisturbedB, NotMeasuredInB: r.NotMeasured, GaveUpB: r.GaveUp})
	}
	for _, v := range vs {
		doc.Verdicts = append(doc.Verdicts, jsonVerdict{v.Rule.Text, v.Cell.Key, v.Fail, v.Why})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
