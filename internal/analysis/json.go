package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// WriteJSON writes the model as summary.json, one row per line.
// Undefined statistics (NaN) are null; the file carries ModelVersion so
// later tools (run comparison, a regression gate) can read numbers
// without recomputing them.
func WriteJSON(w io.Writer, m Model) error {
	rows := m.Rows
	m.Rows = nil
	head, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(`"rows": [`)
	for i, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	if len(rows) > 0 {
		b.WriteString("\n ")
	}
	b.WriteString("]")
	// Model's own rows come first of the fields named "rows".
	out := bytes.Replace(head, []byte(`"rows": null`), b.Bytes(), 1)
	_, err = w.Write(append(out, '\n'))
	return err
}

// ReadJSON reads summary.json. A file of another major version is an
// error rather than numbers read with the wrong meaning; version 1 differs
// only in cpu's -1, which cpuIn reads as null's meaning, so it is read.
func ReadJSON(r io.Reader) (Model, error) {
	var m Model
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return Model{}, fmt.Errorf("decode summary model: %w", err)
	}
	if m.Version != ModelVersion && m.Version != 1 {
		return Model{}, fmt.Errorf("summary model version %d, this binary reads %d", m.Version, ModelVersion)
	}
	return m, nil
}

// jnum is a float64 that is null in JSON when it is not finite.
type jnum float64

func (v jnum) MarshalJSON() ([]byte, error) {
	if !Finite(float64(v)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', -1, 64), nil
}

func (v *jnum) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*v = jnum(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*v = jnum(f)
	return err
}

// rowJSON is Row as summary.json stores it (the summary.csv column names).
type rowJSON struct {
	results.Cell
	Metric         string      `json:"metric"`
	CPU            *int        `json:"cpu"` // null where summary.csv leaves it empty: not a per-core row
	Unit           string      `json:"unit"`
	N              int         `json:"n"`
	Mean           jnum        `json:"mean"`
	SD             jnum        `json:"sd"`
	CI95Low        jnum        `json:"ci95_low"`
	CI95High       jnum        `json:"ci95_high"`
	CIMethod       string      `json:"ci_method"`
	HasNorm        bool        `json:"has_norm"`
	Normalized     jnum        `json:"normalized"`
	NormCI95Low    jnum        `json:"normalized_ci95_low"`
	NormCI95High   jnum        `json:"normalized_ci95_high"`
	NormMethod     string      `json:"normalized_method,omitempty"`
	PBaseline      jnum        `json:"p_vs_baseline"`
	PFirstDatapath jnum        `json:"p_vs_first_datapath"`
	Refs           []int       `json:"refs,omitempty"`
	VsBaseline     *Pair       `json:"vs_baseline,omitempty"`
	VsFirstDP      *Pair       `json:"vs_first_datapath,omitempty"`
	Groups         *groupsJSON `json:"groups,omitempty"`
	Wide           *wideJSON   `json:"wide,omitempty"`
}

// wideJSON is WideSpread as summary.json stores it.
type wideJSON struct {
	Spread  float64   `json:"spread_log_sd"`
	Typical float64   `json:"typical_log_sd"`
	Others  int       `json:"others"`
	DF      int       `json:"df"`
	P       float64   `json:"p"`
	Values  []float64 `json:"values"`
}

func wideOut(w *WideSpread) *wideJSON {
	if w == nil {
		return nil
	}
	return &wideJSON{w.Spread, w.Typical, w.Others, w.DF, w.P, w.Values}
}

func wideIn(j *wideJSON) *WideSpread {
	if j == nil {
		return nil
	}
	return &WideSpread{Wide: stats.Wide{Spread: j.Spread, Typical: j.Typical, Others: j.Others, DF: j.DF, P: j.P}, Values: j.Values}
}

// groupsJSON is stats.Groups as summary.json stores it (an unbounded
// separation as null).
type groupsJSON struct {
	LowMean    jnum `json:"low_mean"`
	HighMean   jnum `json:"high_mean"`
	LowN       int  `json:"low_n"`
	HighN      int  `json:"high_n"`
	Separation jnum `json:"separation"`
	InTime     bool `json:"in_time"`
}

func groupsOut(g *stats.Groups) *groupsJSON {
	if g == nil {
		return nil
	}
	sep := g.Separation
	if math.IsInf(sep, 0) {
		sep = math.NaN()
	}
	return &groupsJSON{jnum(g.LowMean), jnum(g.HighMean), g.LowN, g.HighN, jnum(sep), g.InTime}
}

func groupsIn(j *groupsJSON) *stats.Groups {
	if j == nil {
		return nil
	}
	sep := float64(j.Separation)
	if math.IsNaN(sep) {
		sep = math.Inf(1)
	}
	return &stats.Groups{LowMean: float64(j.LowMean), HighMean: float64(j.HighMean), LowN: j.LowN, HighN: j.HighN, Separation: sep, InTime: j.InTime}
}

// MarshalJSON writes the row with nulls for undefined statistics (the
// normalized fields of a row that is not normalized among them, the
// interval of one trial), and for the bounds of an interval that was not
// estimated, exactly where WriteCSV leaves them empty: a normalized
// interval of method none (a baseline of one trial) keeps bounds equal
// to the ratio in the model, which would read as a zero-width interval.
func (r Row) MarshalJSON() ([]byte, error) {
	if !r.HasNorm {
		r.Normalized = math.NaN()
	}
	if r.N < 2 { // no interval, not one of zero width (WriteCSV)
		r.CI95Low, r.CI95High = math.NaN(), math.NaN()
	}
	if !NormHasCI(r) {
		// Also the baseline's own row of one trial, whose interval
		// divides that missing one by its mean: [1, 1] beside a method
		// that names no "none".
		r.NormCI95Low, r.NormCI95High = math.NaN(), math.NaN()
	}
	return json.Marshal(rowJSON{
		Cell: r.Cell, Metric: r.Metric, CPU: cpuOut(r.CPU), Unit: r.Unit, N: r.N,
		Mean: jnum(r.Mean), SD: jnum(r.SD), CI95Low: jnum(r.CI95Low), CI95High: jnum(r.CI95High), CIMethod: r.CIMethod,
		HasNorm: r.HasNorm, Normalized: jnum(r.Normalized), NormCI95Low: jnum(r.NormCI95Low), NormCI95High: jnum(r.NormCI95High),
		NormMethod: r.NormMethod, PBaseline: jnum(r.PBaseline), PFirstDatapath: jnum(r.PFirstDatapath), Refs: r.Refs,
		VsBaseline: r.VsBaseline, VsFirstDP: r.VsFirstDatapath, Groups: groupsOut(r.Groups), Wide: wideOut(r.Wide),
	})
}

// cpuOut is a row's core for summary.json: none (the -1 that marks a row
// not per core) is null, as summary.csv leaves the column empty, so no
// script reads -1 as a core.
func cpuOut(cpu int) *int {
	if cpu < 0 {
		return nil
	}
	return &cpu
}

// cpuIn reads cpuOut's value back; files written before 2026-12-07
// stored -1 themselves, which reads the same.
func cpuIn(cpu *int) int {
	if cpu == nil {
		return -1
	}
	return *cpu
}

// UnmarshalJSON reads a row MarshalJSON wrote.
func (r *Row) UnmarshalJSON(b []byte) error {
	var j rowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Row{
		SummaryRow: results.SummaryRow{
			Cell: j.Cell, Metric: j.Metric, CPU: cpuIn(j.CPU), Unit: j.Unit, N: j.N,
			Mean: float64(j.Mean), SD: float64(j.SD), CI95Low: float64(j.CI95Low), CI95High: float64(j.CI95High),
			HasNorm: j.HasNorm, Normalized: float64(j.Normalized), NormCI95Low: float64(j.NormCI95Low), NormCI95High: float64(j.NormCI95High),
		},
		CIMethod: j.CIMethod, NormMethod: j.NormMethod,
		PBaseline: float64(j.PBaseline), PFirstDatapath: float64(j.PFirstDatapath), Refs: j.Refs,
		VsBaseline: j.VsBaseline, VsFirstDatapath: j.VsFirstDP, Groups: groupsIn(j.Groups), Wide: wideIn(j.Wide),
	}
	return nil
}

// refMatchJSON is RefMatch with its reference in the study file's names
// (study.Reference carries json tags equal to its yaml ones).
type refMatchJSON struct {
	Reference study.Reference `json:"reference"`
	refMatchFields
}

// refMatchFields are RefMatch's fields other than the reference.
type refMatchFields struct {
	Label    string `json:"label"`
	Rows     []Key  `json:"rows"`
	NormRows []Key  `json:"norm_rows"`
	MeanLow  jnum   `json:"mean_low"`
	MeanHigh jnum   `json:"mean_high"`
	NormLow  jnum   `json:"norm_low"`
	NormHigh jnum   `json:"norm_high"`
	// The ratio fields were added later: a file without them reads as no
	// ratio rows, an undefined span and no interval.
	RatioRows []Key `json:"ratio_rows,omitempty"`
	RatioLow  jnum  `json:"ratio_low"`
	RatioHigh jnum  `json:"ratio_high"`
	RatioCI   *Pair `json:"ratio_ci,omitempty"`
	// The difference fields were added later still: absent, no rows and
	// an undefined span and interval.
	DiffRows   []Key `json:"diff_rows,omitempty"`
	DiffLow    jnum  `json:"diff_low"`
	DiffHigh   jnum  `json:"diff_high"`
	DiffCILow  jnum  `json:"diff_ci_low"`
	DiffCIHigh jnum  `json:"diff_ci_high"`
	// Why a point was not measured (added later; empty in older files).
	Missing      string `json:"missing,omitempty"`
	RatioMissing string `json:"ratio_missing,omitempty"`
	// How ours was measured otherwise (added later; empty in older files).
	Method string `json:"method,omitempty"`
}

// MarshalJSON writes the reference with the study file's field names.
func (m RefMatch) MarshalJSON() ([]byte, error) {
	return json.Marshal(refMatchJSON{
		Reference: m.Reference,
		refMatchFields: refMatchFields{m.Label, m.Rows, m.NormRows,
			jnum(m.MeanLow), jnum(m.MeanHigh), jnum(m.NormLow), jnum(m.NormHigh),
			m.RatioRows, jnum(m.RatioLow), jnum(m.RatioHigh), m.RatioCI,
			m.DiffRows, jnum(m.DiffLow), jnum(m.DiffHigh), jnum(m.DiffCILow), jnum(m.DiffCIHigh),
			m.Missing, m.RatioMissing, m.Method},
	})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (m *RefMatch) UnmarshalJSON(b []byte) error {
	nan := jnum(math.NaN())
	j := refMatchJSON{refMatchFields: refMatchFields{RatioLow: nan, RatioHigh: nan, DiffLow: nan, DiffHigh: nan, DiffCILow: nan, DiffCIHigh: nan}}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = RefMatch{
		Reference: j.Reference,
		Label:     j.Label, Rows: j.Rows, NormRows: j.NormRows,
		MeanLow: float64(j.MeanLow), MeanHigh: float64(j.MeanHigh), NormLow: float64(j.NormLow), NormHigh: float64(j.NormHigh),
		RatioRows: j.RatioRows, RatioLow: float64(j.RatioLow), RatioHigh: float64(j.RatioHigh), RatioCI: j.RatioCI,
		DiffRows: j.DiffRows, DiffLow: float64(j.DiffLow), DiffHigh: float64(j.DiffHigh),
		DiffCILow: float64(j.DiffCILow), DiffCIHigh: float64(j.DiffCIHigh),
		Missing: j.Missing, RatioMissing: j.RatioMissing, Method: j.Method,
	}
	return nil
}
