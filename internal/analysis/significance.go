package analysis

import (
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// Comparison is one sample set against a reference set: the ratio of
// their means with Fieller's interval and Welch's two-sided p.
type Comparison struct {
	Ratio stats.RatioCI
	// P is NaN when either side has fewer than two values.
	P float64
}

// Versus compares x against ref. The summary's normalized values and p
// values and `cnibench compare` use it, so both show the same numbers.
func Versus(x, ref []float64) Comparison {
	c := Comparison{Ratio: stats.Ratio(x, ref), P: math.NaN()}
	if len(x) > 1 && len(ref) > 1 {
		_, _, c.P = stats.Welch(x, ref)
	}
	return c
}

// pValues fills every row's p values: against the baseline tuning's row
// (if baseline is set) and against the first datapath's row (if the rows
// have more than one datapath). The p values are not corrected for
// multiple comparisons; the reports say so.
func pValues(rows []Row, values map[Key][]float64, baseline string) {
	first := ""
	if d := DimsOf(rows).Datapaths; len(d) > 1 {
		first = d[0]
	}
	for i := range rows {
		r := &rows[i]
		k := RowKey(*r)
		if baseline != "" && r.Tuning != baseline {
			b := k
			b.Tuning = baseline
			r.PBaseline = Versus(values[k], values[b]).P
		}
		if first != "" && r.Datapath != first {
			f := k
			f.Datapath = first
			r.PFirstDatapath = Versus(values[k], values[f]).P
		}
	}
}
