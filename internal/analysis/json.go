package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/cnibench/cnibench/internal/results"
)

// WriteJSON writes the model as summary.json. Undefined statistics (NaN)
// are null; the file carries ModelVersion so later tools (run comparison,
// a regression gate) can read numbers without recomputing them.
func WriteJSON(w io.Writer, m Model) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(m)
}

// ReadJSON reads summary.json. A file of another major version is an
// error rather than numbers read with the wrong meaning.
func ReadJSON(r io.Reader) (Model, error) {
	var m Model
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return Model{}, fmt.Errorf("decode summary model: %w", err)
	}
	if m.Version != ModelVersion {
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
	Metric         string `json:"metric"`
	CPU            int    `json:"cpu"`
	Unit           string `json:"unit"`
	N              int    `json:"n"`
	Mean           jnum   `json:"mean"`
	SD             jnum   `json:"sd"`
	CI95Low        jnum   `json:"ci95_low"`
	CI95High       jnum   `json:"ci95_high"`
	CIMethod       string `json:"ci_method"`
	HasNorm        bool   `json:"has_norm"`
	Normalized     jnum   `json:"normalized"`
	NormCI95Low    jnum   `json:"normalized_ci95_low"`
	NormCI95High   jnum   `json:"normalized_ci95_high"`
	NormMethod     string `json:"normalized_method,omitempty"`
	PBaseline      jnum   `json:"p_vs_baseline"`
	PFirstDatapath jnum   `json:"p_vs_first_datapath"`
	Refs           []int  `json:"refs,omitempty"`
}

// MarshalJSON writes the row with nulls for undefined statistics.
func (r Row) MarshalJSON() ([]byte, error) {
	return json.Marshal(rowJSON{
		Cell: r.Cell, Metric: r.Metric, CPU: r.CPU, Unit: r.Unit, N: r.N,
		Mean: jnum(r.Mean), SD: jnum(r.SD), CI95Low: jnum(r.CI95Low), CI95High: jnum(r.CI95High), CIMethod: r.CIMethod,
		HasNorm: r.HasNorm, Normalized: jnum(r.Normalized), NormCI95Low: jnum(r.NormCI95Low), NormCI95High: jnum(r.NormCI95High),
		NormMethod: r.NormMethod, PBaseline: jnum(r.PBaseline), PFirstDatapath: jnum(r.PFirstDatapath), Refs: r.Refs,
	})
}

// UnmarshalJSON reads a row MarshalJSON wrote.
func (r *Row) UnmarshalJSON(b []byte) error {
	var j rowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Row{
		SummaryRow: results.SummaryRow{
			Cell: j.Cell, Metric: j.Metric, CPU: j.CPU, Unit: j.Unit, N: j.N,
			Mean: float64(j.Mean), SD: float64(j.SD), CI95Low: float64(j.CI95Low), CI95High: float64(j.CI95High),
			HasNorm: j.HasNorm, Normalized: float64(j.Normalized), NormCI95Low: float64(j.NormCI95Low), NormCI95High: float64(j.NormCI95High),
		},
		CIMethod: j.CIMethod, NormMethod: j.NormMethod,
		PBaseline: float64(j.PBaseline), PFirstDatapath: float64(j.PFirstDatapath), Refs: j.Refs,
	}
	return nil
}
