package report

import (
	"testing"

	"gonum.org/v1/plot"
)

// TestBarsLeaveHeadroom: the tallest bar or whisker of a bar figure stays
// below the top of its range, so it does not touch the frame and the
// title (a one-trial sweep's 18.95 Gbit/s bar reached both).
func TestBarsLeaveHeadroom(t *testing.T) {
	g := &groupedBars{Groups: 2, Series: []barSeries{{Mean: []float64{14, 18.95}, Lo: []float64{13, 18.95}, Hi: []float64{15, 18.95}}}}
	if _, _, lo, hi := g.DataRange(); lo != 0 || hi < 18.95*(1+headroom/2) {
		t.Errorf("grouped bars' range [%g, %g]: want 0 to above 18.95 with headroom", lo, hi)
	}
	s := &stackedBars{Bars: [][]float64{{600, 588}}}
	if _, _, lo, hi := s.DataRange(); lo != 0 || hi < 1188*(1+headroom/2) {
		t.Errorf("stacked bars' range [%g, %g]: want 0 to above 1188 with headroom", lo, hi)
	}
}

// TestPadY: a line figure gets headroom above its data, and below it
// unless its axis starts at zero (a loss of 0% stays on the axis).
func TestPadY(t *testing.T) {
	p := plot.New()
	p.Y.Min, p.Y.Max = 0.015, 0.016
	padY(p)
	if p.Y.Min >= 0.015 || p.Y.Max <= 0.016 {
		t.Errorf("jitter axis [%g, %g]: want room on both sides of [0.015, 0.016]", p.Y.Min, p.Y.Max)
	}
	p.Y.Min, p.Y.Max = 0, 1.3
	padY(p)
	if p.Y.Min != 0 || p.Y.Max <= 1.3 {
		t.Errorf("loss axis [%g, %g]: want 0 to above 1.3", p.Y.Min, p.Y.Max)
	}
}
