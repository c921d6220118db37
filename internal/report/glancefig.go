package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// glanceFigures draw the glance of a study of several datapaths with
// tunings at one replica count (glanceByDatapath) as a figure per
// workload: a group of bars per datapath, a bar per tuning at its ratio
// to the baseline with the interval its decision rests on, and the
// baseline's 1 as a dashed line. Which CNI a tuning helps, and by how
// much, is then one look.
func (n *numbers) glanceFigures(s *study.Study) []figure {
	parts := n.glanceParts(s)
	if !byDatapath(parts) {
		return nil
	}
	reps := parts[0].g.Dims.Replicas[0]
	type key struct{ workload, impairment, metric string }
	var order []key
	byKey := map[key][]glancePart{}
	for _, p := range parts {
		k := key{p.g.Workload, p.g.Impairment, p.metric}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], p)
	}
	var out []figure
	for _, k := range order {
		name := k.workload
		if k.impairment != "" {
			name += " / " + k.impairment
		}
		out = append(out, n.glanceFigure(byKey[k], name, k.metric, reps))
	}
	return out
}

// glanceFigure is one workload's figure of glanceFigures, and with one
// part the normalized figure of a group at one replica count.
func (n *numbers) glanceFigure(parts []glancePart, name, metric string, reps int) figure {
	by := " by datapath"
	if len(parts) == 1 {
		by = "" // a datapath's own section (groupPage)
	}
	title := fmt.Sprintf("%s / %s%s (%s, %d replica%s)", metric, n.Baseline, by, name, reps, plural(reps))
	f := figure{Title: title, Caption: fmt.Sprintf(
		"Each tuning's %s divided by the baseline's (%s) at the same datapath: the ratio its decision at a glance rests on, "+
			"drawn from the baseline's 1 up or down, with that decision's interval as whiskers (the controller's at its look where it decided there, else 95%% over all trials); "+
			"the dashed line is the baseline, the grey band the margin within which a tuning counts as equal.", metric, n.Baseline)}
	bars, tunings, drawn := n.glanceBars(parts, metric, reps)
	leg := newLegend()
	for i, tn := range tunings {
		leg.Add(tn, barThumb{bars.Series[i].Color})
	}
	if !drawn {
		f.Missing = "No ratio to the baseline in this run."
		return f
	}
	p := newPlot(title, "datapath", metric+" / "+n.Baseline)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	var ticks []plot.Tick
	for gi, part := range parts {
		ticks = append(ticks, plot.Tick{Value: float64(gi), Label: part.g.Datapath})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if m := n.Margin; m > 0 {
		// The margin within which a tuning counts as equal.
		x0, x1 := -0.5, float64(len(parts))-0.5
		if band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 1 - m}, {X: x1, Y: 1 - m}, {X: x1, Y: 1 + m}, {X: x0, Y: 1 + m}}); err == nil {
			band.Color, band.LineStyle.Width = color.Gray{Y: 0xe8}, 0
			p.Add(band)
		}
	}
	p.Add(bars)
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(parts)) - 0.5, Y: 1}})
	if err == nil {
		one.Color, one.Dashes = color.Gray{Y: 0x50}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(one)
	}
	// Bars start at the baseline's 1: up is more, down is less. A little
	// room below the lowest whisker too.
	p.Y.Min -= headroom * (p.Y.Max - p.Y.Min)
	// Each group as wide as its bars or its datapath's name, whichever
	// is wider: seven CNI names must not run into each other.
	per := len(tunings)*14 + 20
	for _, part := range parts {
		per = max(per, 6*len(part.g.Datapath)+16)
	}
	w := math.Min(1600, math.Max(figW, float64(110+len(parts)*per)))
	f.Wide = w > figW
	return render(f, p, leg, vg.Length(w), figH)
}

// glanceBars are the bars of glanceFigure: a group per part, a series
// per tuning of any part in first-seen order, each bar the ratio and
// interval of the decision that stands (glanceDecision); drawn says
// whether any bar has one.
func (n *numbers) glanceBars(parts []glancePart, metric string, reps int) (bars *groupedBars, tunings []string, drawn bool) {
	for _, p := range parts {
		for _, tn := range p.g.Dims.Tunings {
			if !slices.Contains(tunings, tn) {
				tunings = append(tunings, tn)
			}
		}
	}
	bars = &groupedBars{Groups: len(parts), Fill: 0.8, Base: 1}
	if len(parts) == 1 {
		bars.Fill = 0.4 // one group would fill the figure
	}
	for _, tn := range tunings {
		ser := barSeries{Color: n.tuningColor(tn)}
		for _, p := range parts {
			m, lo, hi := math.NaN(), math.NaN(), math.NaN()
			c := results.Cell{Datapath: p.g.Datapath, Tuning: tn, Workload: p.g.Workload, Replicas: reps, Impairment: p.g.Impairment}
			if r, ok := n.row(c, metric, -1); ok {
				if d := n.glanceDecision(r); d.have {
					m, lo, hi = d.ratio, d.low, d.high
					drawn = true
				}
			}
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, m), append(ser.Lo, lo), append(ser.Hi, hi)
		}
		bars.Series = append(bars.Series, ser)
	}
	return bars, tunings, drawn
}
