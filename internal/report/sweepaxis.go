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
	// zeroLog, when > 0, is the smallest nonzero value of a sweep that
	// spans more than two decades and also holds 0, which a log axis
	// cannot place (cni-compare's 0, 1, 100, ... 1500 background
	// connections): see symLog.
	zeroLog float64
	ticks   []plot.Tick // the positions' labels, when not numeric
}

// axisOf is the x axis of base's sweep over its variants.
func axisOf(base study.Workload, variants []study.Workload) sweepAxis {
	if title, at, ok := analysis.SweptAxis(base); ok {
		a := sweepAxis{title: title, at: at, numeric: true}
		lo, pos, hi := math.Inf(1), math.Inf(1), math.Inf(-1)
		for _, v := range variants {
			if x, ok := at(v); ok {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
				if x > 0 {
					pos = math.Min(pos, x)
				}
			}
		}
		switch {
		case lo > 0:
			a.log = hi/lo > 100
		case lo == 0 && hi/pos > 100:
			a.zeroLog = pos
		}
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
// origin; all leave room beyond the outermost points.
func (a sweepAxis) apply(p *plot.Plot) {
	switch {
	case !a.numeric:
		p.X.Tick.Marker = plot.ConstantTicks(a.ticks)
		p.X.Min, p.X.Max = p.X.Min-0.5, p.X.Max+0.5
	case a.log:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = p.X.Min/1.2, p.X.Max*1.2
	case a.zeroLog > 0:
		// From 0, the sweep's own first value, whichever points have
		// data; the same room as the log axis's factor 1.2 either side.
		s := symLog{a.zeroLog}
		pad := math.Log10(1.2)
		p.X.Scale, p.X.Tick.Marker = s, s
		p.X.Min, p.X.Max = s.inv(-pad), s.inv(s.f(math.Max(p.X.Max, a.zeroLog))+pad)
	default:
		p.X.Min = 0
		p.X.Max += headroom * p.X.Max
		if p.X.Max <= 0 {
			// Only 0 (one point, or all at 0): gonum would widen the
			// empty range to -1..1, a negative count.
			p.X.Max = 1
		}
	}
}

// symLog places a sweep holding 0 whose other values span more than two
// decades: logarithmic from lin, its smallest nonzero value, with 0 one
// decade to its left (linear between). Evenly spaced positions would also
// part 0 from 1, but would put 1000 to 1500 connections as far apart as 1
// to 100 and lose what placing by value shows; on this axis 0 and 1 are
// as far apart as 1 and 10, and the rest reads as on a log axis.
type symLog struct{ lin float64 }

// f is x's position in decades: x/lin up to lin, 1+log10(x/lin) past it,
// odd about 0.
func (s symLog) f(x float64) float64 {
	if a := math.Abs(x); a > s.lin {
		return math.Copysign(1+math.Log10(a/s.lin), x)
	}
	return x / s.lin
}

func (s symLog) inv(y float64) float64 {
	if math.Abs(y) > 1 {
		return math.Copysign(s.lin*math.Pow(10, math.Abs(y)-1), y)
	}
	return y * s.lin
}

func (s symLog) Normalize(min, max, x float64) float64 {
	lo, hi := s.f(min), s.f(max)
	return (s.f(x) - lo) / (hi - lo)
}

// Ticks labels 0 and, past lin, as a log axis does (logTicks).
func (s symLog) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	if min <= 0 && max >= 0 {
		out = append(out, plot.Tick{Value: 0, Label: "0"})
	}
	if max >= s.lin {
		out = append(out, logTicks{}.Ticks(math.Max(min, s.lin), max)...)
	}
	return out
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
