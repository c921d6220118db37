package report

import (
	"math"

	"gonum.org/v1/plot"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/study"
)

// sweepAxis is how a sweep's figures place its variants along x. Where
// the swept parameter is a number (streams, bytes, a rate) they sit at
// their values, so a figure shows how the metric grows with it: 1, 2, 4,
// 8 and 16 flows evenly spaced hid seed 001's "nearly proportional to the
// flow numbers". Otherwise they sit at positions 0, 1, ... labelled with
// their values.
type sweepAxis struct {
	title string
	at    func(study.Workload) (float64, bool)
	// numeric: at is the variant's value; log: on a logarithmic scale,
	// for values spanning more than two decades (64 B to 64 KiB messages
	// crowd the small ones into one point on a linear axis).
	numeric, log bool
	ticks        []plot.Tick // the positions' labels, when not numeric
}

// axisOf is the x axis of base's sweep over its variants.
func axisOf(base study.Workload, variants []study.Workload) sweepAxis {
	if title, at, ok := analysis.SweptAxis(base); ok {
		a := sweepAxis{title: title, at: at, numeric: true}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range variants {
			if x, ok := at(v); ok {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		a.log = lo > 0 && hi/lo > 100
		return a
	}
	pos := map[string]float64{}
	a := sweepAxis{title: analysis.SweptParam(base)}
	for i, v := range variants {
		pos[v.Name] = float64(i)
		a.ticks = append(a.ticks, plot.Tick{Value: float64(i), Label: paramLabel(v)})
	}
	a.at = func(v study.Workload) (float64, bool) { x, ok := pos[v.Name]; return x, ok }
	return a
}

// apply sets p's x axis; call it after the last Add. A linear axis
// starts at 0, so that proportionality reads as a line through the
// origin; both leave room beyond the outermost points.
func (a sweepAxis) apply(p *plot.Plot) {
	switch {
	case !a.numeric:
		p.X.Tick.Marker = plot.ConstantTicks(a.ticks)
		p.X.Min, p.X.Max = p.X.Min-0.5, p.X.Max+0.5
	case a.log:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = p.X.Min/1.2, p.X.Max*1.2
	default:
		p.X.Min = 0
		p.X.Max += headroom * p.X.Max
	}
}

// sweepBase is the study workload named name, which a sweep expands.
func sweepBase(s *study.Study, name string) study.Workload {
	if s != nil {
		for _, w := range s.Spec.Workloads {
			if w.Name == name {
				return w
			}
		}
	}
	return study.Workload{Name: name}
}
