package analysis

import (
	"math"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// WelchVsBaseline returns, per non-baseline cell, the two-sided p value of
// Welch's t test of the metric against the baseline tuning's cell at the
// same datapath, workload and replica count. Cells where the test is
// undefined (fewer than two values on a side) are absent. The p values are
// not corrected for multiple comparisons; the report says so.
func WelchVsBaseline(samples []results.Sample, baseline, metric string) map[results.Cell]float64 {
	vals := map[results.Cell][]float64{}
	for _, s := range samples {
		if v, ok := s.Metrics[metric]; ok && finite(v) {
			vals[s.Cell] = append(vals[s.Cell], v)
		}
	}
	out := map[results.Cell]float64{}
	for c, x := range vals {
		if c.Tuning == baseline {
			continue
		}
		b := c
		b.Tuning = baseline
		if _, _, p := stats.Welch(x, vals[b]); !math.IsNaN(p) {
			out[c] = p
		}
	}
	return out
}
