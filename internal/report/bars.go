package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/analysis"
)

// groupedBars draws one bar per series in each group (cores on x, one bar
// per tuning), with 95% interval whiskers. plotter.BarChart offsets bars
// in absolute lengths, which cannot be matched by error bars and markers
// placed in data coordinates; here everything is in data coordinates.
type groupedBars struct {
	Groups int
	Series []barSeries
	// Fill is the fraction of a group's width the bars use.
	Fill float64
	// Base is where bars start: 0, or 1 for ratios to a baseline (a bar
	// then shows the change, up or down).
	Base float64
	// Missing, when set, is written upright at the base of every slot
	// without a mean (missingMark): a cell without a value must not read
	// as a bar of 0. Left empty where an empty slot is expected (the
	// baseline's own slot among ratios to it).
	Missing string
}

// missingMark is groupedBars.Missing in the figures of measured values,
// and missingBarsNote what their captions say of it.
const (
	missingMark     = "n/a"
	missingBarsNote = "\"n/a\" marks a slot without a value (a cell without samples), not a bar of 0."
)

// anyMissing reports whether some slot of b has no mean: its figure's
// caption then says what "n/a" is.
func (b *groupedBars) anyMissing() bool {
	for _, ser := range b.Series {
		for g := 0; g < b.Groups; g++ {
			if g >= len(ser.Mean) || !analysis.Finite(ser.Mean[g]) {
				return true
			}
		}
	}
	return false
}

// barSeries is one tuning; NaN means may be missing and are not drawn.
type barSeries struct {
	Color        color.Color
	Mean, Lo, Hi []float64
}

// center returns the x of series s's bar in group g.
func (b *groupedBars) center(g, s int) float64 {
	w := b.Fill / float64(len(b.Series))
	return float64(g) - b.Fill/2 + w*(float64(s)+0.5)
}

func (b *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	w := b.Fill / float64(len(b.Series))
	whisker := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
	mark := draw.TextStyle{Color: color.Gray{Y: 0x40}, Font: sans(9), Handler: plot.DefaultTextHandler,
		Rotation: math.Pi / 2, XAlign: draw.XLeft, YAlign: draw.YCenter}
	for s, ser := range b.Series {
		for g := 0; g < b.Groups; g++ {
			m := math.NaN()
			if g < len(ser.Mean) {
				m = ser.Mean[g]
			}
			if !analysis.Finite(m) {
				if b.Missing != "" {
					// Upright from the base, so that it fits a narrow bar's
					// slot; a little above the axis line.
					pt := vg.Point{X: trX(b.center(g, s)), Y: max(trY(b.Base), c.Min.Y) + vg.Points(3)}
					if c.Contains(pt) {
						c.FillText(mark, pt, b.Missing)
					}
				}
				continue
			}
			x0, x1 := trX(b.center(g, s)-w/2), trX(b.center(g, s)+w/2)
			y0, y1 := trY(math.Min(b.Base, m)), trY(math.Max(b.Base, m))
			c.FillPolygon(ser.Color, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
			lo, hi := ser.Lo[g], ser.Hi[g]
			if analysis.Finite(lo) && analysis.Finite(hi) && hi > lo {
				x := trX(b.center(g, s))
				cw := min((x1-x0)*0.35, vg.Points(4))
				c.StrokeLine2(whisker, x, trY(lo), x, trY(hi))
				c.StrokeLine2(whisker, x-cw, trY(lo), x+cw, trY(lo))
				c.StrokeLine2(whisker, x-cw, trY(hi), x+cw, trY(hi))
			}
		}
	}
}

// DataRange spans every group and includes the base and the whiskers,
// with headroom above the tallest so that it does not touch the frame
// (and the title above it).
func (b *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = -0.5, float64(b.Groups)-0.5, b.Base, b.Base
	for _, ser := range b.Series {
		for g := range ser.Mean {
			for _, v := range []float64{ser.Mean[g], ser.Lo[g], ser.Hi[g]} {
				if analysis.Finite(v) {
					ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
				}
			}
		}
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	return xmin, xmax, ymin, ymax + headroom*(ymax-ymin)
}

// headroom is the share of a figure's range left above its tallest bar,
// whisker or point.
const headroom = 0.06

// padY leaves headroom above a line figure's data, and below it unless
// the axis starts at zero, so that the points and whiskers at the
// extremes do not sit on the frame. Call it after the last Add.
func padY(p *plot.Plot) {
	pad := headroom * (p.Y.Max - p.Y.Min)
	if p.Y.Min != 0 {
		p.Y.Min -= pad
	}
	p.Y.Max += pad
}

// barThumb is a legend swatch for a bar series.
type barThumb struct{ color.Color }

func (t barThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}
	c.FillPolygon(t.Color, pts)
}

// glyphThumb is a legend entry showing only a glyph (published markers).
type glyphThumb struct{ draw.GlyphStyle }

func (t glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(t.GlyphStyle, c.Center())
}
