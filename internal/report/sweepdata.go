package report

import (
	"gonum.org/v1/plot/plotter"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/study"
)

// sweepData is one sweep's rows, by variant, as its figures draw them.
type sweepData struct {
	sw  analysis.Sweep
	idx map[analysis.Key]analysis.Row
	// base is the study workload the sweep expands (sweepBase): what it
	// sweeps, for the x axis.
	base study.Workload
}

func (d sweepData) row(v study.Workload, metric string) (analysis.Row, bool) {
	r, ok := d.idx[analysis.Key{Cell: d.sw.Cell(v), Metric: metric, CPU: -1}]
	return r, ok && r.N > 0
}

// rows are the rows of metrics with data over the sweep's variants: what
// its figure's points rest on (meanNote).
func (d sweepData) rows(metrics ...string) []analysis.Row {
	var out []analysis.Row
	for _, v := range d.sw.Variants {
		for _, m := range metrics {
			if r, ok := d.row(v, m); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

func (d sweepData) has(metric string) bool {
	for _, v := range d.sw.Variants {
		if _, ok := d.row(v, metric); ok {
			return true
		}
	}
	return false
}

// curve is one metric over a sweep's variants as a line figure draws it:
// the points with their whiskers, and the line's segments, which break
// at a variant without a value: a line drawn straight across a failed
// variant would show a value there that was never measured.
type curve struct {
	pts  plotter.XYs
	errs plotter.YErrors
	segs []plotter.XYs
}

// xyCI collects (x, mean, lo, hi) of a metric over variants, scaled,
// starting a new segment after each variant without a value (or an x).
func xyCI(d sweepData, xOf func(study.Workload) (float64, bool), metric string, scale float64) curve {
	var cv curve
	var seg plotter.XYs
	for _, v := range d.sw.Variants {
		x, ok := xOf(v)
		r, ok2 := d.row(v, metric)
		if !ok || !ok2 || !analysis.Finite(r.Mean) {
			if len(seg) > 0 {
				cv.segs, seg = append(cv.segs, seg), nil
			}
			continue
		}
		m := r.Mean * scale
		lo, hi := 0.0, 0.0
		if analysis.Finite(r.CI95Low) && analysis.Finite(r.CI95High) {
			lo, hi = m-r.CI95Low*scale, r.CI95High*scale-m
		}
		pt := plotter.XY{X: x, Y: m}
		cv.pts, seg = append(cv.pts, pt), append(seg, pt)
		cv.errs = append(cv.errs, struct{ Low, High float64 }{lo, hi})
	}
	if len(seg) > 0 {
		cv.segs = append(cv.segs, seg)
	}
	return cv
}
