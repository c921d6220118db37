package report

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// figure is one inline SVG with its caption. Missing explains why there is
// no SVG (no data) instead.
type figure struct {
	Title   string
	Caption string
	SVG     template.HTML
	Missing string
	// Wide figures (many CPUs) take a row of their own.
	Wide bool
}

const (
	figW = 600 // points, before scaling by CSS
	figH = 320
)

// normalizedFigure draws bitrate / baseline bitrate against replicas, one
// line per tuning, with 95% Fieller intervals and published values as ×.
// Replicas are placed on a log2 axis (the studies double them), tuning by
// tuning shifted a little so the whiskers do not hide each other.
func normalizedFigure(g analysis.Group, metric string, n *numbers) figure {
	baseline := n.Baseline
	title := fmt.Sprintf("Normalized %s vs replicas (%s)", metric, g.Name())
	f := figure{Title: title, Caption: fmt.Sprintf(
		"Mean %s of each tuning divided by the mean of %s at the same replica count (%s); whiskers are the plain 95%% interval over "+
			"all of each cell's trials (Fieller's, or the delta method's where Fieller's is unbounded; for %s itself its own interval "+
			"relative to its mean). × marks a published value for the same point; "+
			"published values for points this run did not measure are only in the table.", metric, baseline, figureN(g.Rows, metric), baseline)}
	if len(n.stops) > 0 {
		f.Caption += " Where the run decided a cell at one of its looks, the decision rests on the interval at that look, at its stricter " +
			"confidence (the table and \"Repetitions and decisions\"), not on these whiskers."
	}
	p := newPlot(title, "replicas (pod pairs)", metric+" / "+baseline+" "+metric)
	leg := newLegend()

	reps := g.Dims.Replicas
	xOf := func(r int) float64 { return math.Log2(float64(r)) }
	var ticks []plot.Tick
	for _, r := range reps {
		ticks = append(ticks, plot.Tick{Value: xOf(r), Label: strconv.Itoa(r)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)

	nt := len(g.Dims.Tunings)
	drawn := false
	var refPts plotter.XYs
	var refCols []color.Color
	for i, t := range g.Dims.Tunings {
		shift := (float64(i) - float64(nt-1)/2) * 0.05
		col, shape := n.tuningColor(t), n.tuningShape(t)
		ns := n.normSeries(g, metric, t, func(r int) float64 { return xOf(r) + shift })
		for _, seg := range ns.segs {
			if l, err := plotter.NewLine(seg); err == nil && len(seg) > 1 {
				l.Color, l.Width = col, vg.Points(1.5)
				p.Add(l)
			}
		}
		for _, pt := range ns.refs {
			refPts, refCols = append(refPts, pt), append(refCols, col)
		}
		if len(ns.pts) == 0 {
			continue
		}
		drawn = true
		sc, err := plotter.NewScatter(ns.pts)
		if err != nil {
			continue
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: shape}
		eb := &plotter.YErrorBars{XYs: ns.pts, YErrors: ns.errs, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
		p.Add(eb, sc)
		line := &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5)}}
		leg.Add(t, line, sc)
	}
	if !drawn {
		f.Missing = "No normalized " + metric + " in this run (no samples, or no baseline samples to normalize by)."
		return f
	}
	one := plotter.XYs{{X: xOf(reps[0]) - 0.5, Y: 1}, {X: xOf(reps[len(reps)-1]) + 0.5, Y: 1}}
	if ref1, err := plotter.NewLine(one); err == nil {
		ref1.Color, ref1.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ref1)
	}
	addRefMarkers(p, &leg, refPts, refCols)
	p.X.Min, p.X.Max = xOf(reps[0])-0.4, xOf(reps[len(reps)-1])+0.4
	pad := 0.06 * (p.Y.Max - p.Y.Min)
	p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
	return render(f, p, leg, figW, figH)
}

// meanWhiskers says what a figure's whiskers around a mean are
// (docs/statistics.md).
const meanWhiskers = "95% Student t intervals of the mean (mean ± t·sd/√n)"

// meanNote says what a figure's points and whiskers are, from the rows of
// the metrics it draws: "mean over trials (n = 3 trials each), whiskers
// are 95% Student t ...". Where each point rests on one trial (a --quick
// run) it says there is no interval: the whiskers are drawn at zero
// length, and "with 95% CI" described another run.
func meanNote(rows []analysis.Row, metrics ...string) string {
	n := figureN(rows, metrics...)
	if _, hi := trialRange(rows, metrics); hi == 1 {
		return "the value of a single trial (" + n + ")"
	}
	return "mean over trials (" + n + "), whiskers are " + meanWhiskers
}

// figureN is how many trials each point of a figure of metrics rests on:
// "n = 3 trials each", "n = 3 to 10 trials each" (an adaptive run's
// cells stop at different counts).
func figureN(rows []analysis.Row, metrics ...string) string {
	lo, hi := trialRange(rows, metrics)
	switch {
	case hi == 1:
		return "n = 1 trial each: no interval"
	case lo == hi:
		return fmt.Sprintf("n = %d trials each", lo)
	}
	return fmt.Sprintf("n = %d to %d trials each", lo, hi)
}

// trialRange is the fewest and most trials of the rows of metrics with
// data.
func trialRange(rows []analysis.Row, metrics []string) (lo, hi int) {
	for _, r := range rows {
		if !slices.Contains(metrics, r.Metric) || r.N == 0 {
			continue
		}
		if lo == 0 || r.N < lo {
			lo = r.N
		}
		hi = max(hi, r.N)
	}
	return lo, hi
}

// repsRows are the rows at one replica count.
func repsRows(rows []analysis.Row, reps int) []analysis.Row {
	var out []analysis.Row
	for _, r := range rows {
		if r.Replicas == reps {
			out = append(out, r)
		}
	}
	return out
}

// normSeries is one tuning's normalized values over replica counts:
// points with whiskers, line segments between consecutive counts with
// data, and published values at the same points.
type normSeries struct {
	pts  plotter.XYs
	errs plotter.YErrors
	segs []plotter.XYs
	refs plotter.XYs
}

func (n *numbers) normSeries(g analysis.Group, metric, tuning string, x func(int) float64) normSeries {
	var ns normSeries
	var seg plotter.XYs
	for _, reps := range g.Dims.Replicas {
		c := results.Cell{Datapath: g.Datapath, Tuning: tuning, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}
		row, ok := n.row(c, metric, -1)
		if !ok || !row.HasNorm || !analysis.Finite(row.Normalized) {
			ns.segs, seg = append(ns.segs, seg), nil
			continue
		}
		pt := plotter.XY{X: x(reps), Y: row.Normalized}
		seg, ns.pts = append(seg, pt), append(ns.pts, pt)
		lo, hi := row.NormCI95Low, row.NormCI95High
		if !analysis.Finite(lo) || !analysis.Finite(hi) {
			lo, hi = row.Normalized, row.Normalized
		}
		ns.errs = append(ns.errs, struct{ Low, High float64 }{row.Normalized - lo, hi - row.Normalized})
		for _, ref := range n.refs(row) {
			for _, y := range refEnds(ref.Reference.Normalized, ref.Reference.UpTo) {
				ns.refs = append(ns.refs, plotter.XY{X: pt.X, Y: y})
			}
		}
	}
	ns.segs = append(ns.segs, seg)
	return ns
}

// coreW and coreH size the per-core figures, shown two side by side.
const (
	coreW = 430
	coreH = 290
)

// coreLabels names per-core metrics in figure titles and axes.
var coreLabels = map[string]string{
	results.MetricCoreIdle: "idle", results.MetricCoreSoftIRQ: "softirq", results.MetricCoreSystem: "system",
	results.MetricCoreUser: "user", results.MetricCoreNetRx: "NET_RX softirqs", results.MetricCorePoll: "polling",
}

// coreFigure draws a per-core metric at one replica count as grouped bars:
// cores on x, one bar per tuning with data, whiskers for the 95% interval
// and × for published values. Colours follow the tuning's position in the
// study (numbers.tuningColor), so a tuning has the same colour in every
// figure.
func coreFigure(g analysis.Group, metric string, reps int, n *numbers, cpuLabel func(int) string) figure {
	sc := analysis.Display(metric)
	base, client := analysis.CoreBase(metric)
	label := coreLabels[base]
	if label == "" {
		label = base
	}
	if client {
		label = "client node's " + label
	}
	title := fmt.Sprintf("%s per core, %d replica%s", label, reps, plural(reps))
	f := figure{Title: title + fmt.Sprintf(" (%s)", g.Name()), Caption: fmt.Sprintf(
		"%s: each core's %s during the measured window at %d replica%s, %s; "+
			"× marks a published value. Every core sampled on the node is shown (on emulated nodes, every CPU of the machine); tunings without samples are left out.",
		g.Name(), analysis.WithUnit(metric, sc.Unit), reps, plural(reps), meanNote(repsRows(g.Rows, reps), metric))}
	cpus := g.CPUsOf(metric)
	row := func(t string, cpu int) (analysis.Row, bool) {
		r, ok := n.row(results.Cell{Datapath: g.Datapath, Tuning: t, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}, metric, cpu)
		return r, ok && r.N > 0
	}
	bars := &groupedBars{Groups: len(cpus), Fill: 0.8, Missing: missingMark}
	leg := newLegend()
	var tunings []string // with data, in study order
	for _, t := range g.Dims.Tunings {
		ser := barSeries{Color: n.tuningColor(t)}
		has := false
		for _, cpu := range cpus {
			m, lo, hi := math.NaN(), math.NaN(), math.NaN()
			if r, ok := row(t, cpu); ok {
				m, lo, hi = r.Mean*sc.Factor, r.CI95Low*sc.Factor, r.CI95High*sc.Factor
				has = true
			}
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, m), append(ser.Lo, lo), append(ser.Hi, hi)
		}
		if has {
			bars.Series = append(bars.Series, ser)
			tunings = append(tunings, t)
			leg.Add(t, barThumb{ser.Color})
		}
	}
	if len(tunings) == 0 {
		f.Missing = fmt.Sprintf("No per-core %s at %d replica%s in this run.", metric, reps, plural(reps))
		return f
	}
	if bars.anyMissing() {
		f.Caption += " " + missingBarsNote
	}
	// Published markers go on the bar of their tuning and core.
	refPts := n.coreRefs(tunings, cpus, row, bars, sc)
	refCols := make([]color.Color, len(refPts))
	for i := range refCols {
		refCols[i] = color.Black
	}
	p := newPlot(title, "CPU", analysis.WithUnit(label, sc.Unit))
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid, bars)
	var ticks []plot.Tick
	for gi, cpu := range cpus {
		ticks = append(ticks, plot.Tick{Value: float64(gi), Label: cpuLabel(cpu)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	addRefMarkers(p, &leg, refPts, refCols)
	if sc.Unit == "%" {
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max, 10)
	}
	// Idle-like figures show the full 0-100% scale (the bars leave
	// headroom of their own otherwise).
	if sc.Unit == "%" && p.Y.Max > 60 {
		p.Y.Max = 100
	} else if _, _, _, top := bars.DataRange(); p.Y.Max > top {
		p.Y.Max += headroom * (p.Y.Max - p.Y.Min) // a published value above every bar
	}
	// Wide machines get wider figures, up to a limit (CSS scales them
	// down to the page width).
	w := math.Min(1600, math.Max(coreW, float64(110+len(cpus)*(len(tunings)*8+10))))
	f.Wide = w > coreW
	return render(f, p, leg, vg.Length(w), coreH)
}

// coreRefs places published per-core values on the bar of their tuning
// and core.
func (n *numbers) coreRefs(tunings []string, cpus []int, row func(string, int) (analysis.Row, bool), bars *groupedBars, sc analysis.Scale) plotter.XYs {
	var pts plotter.XYs
	for si, t := range tunings {
		for gi, cpu := range cpus {
			r, ok := row(t, cpu)
			if !ok {
				continue
			}
			for _, ref := range n.refs(r) {
				for _, y := range refEnds(ref.Reference.Value, ref.Reference.UpTo) {
					pts = append(pts, plotter.XY{X: bars.center(gi, si), Y: y * sc.Factor})
				}
			}
		}
	}
	return pts
}

// refEnds are the published numbers a figure marks for one of a
// reference's: v, or both ends of the range v starts (upTo), none
// where the reference has no such number.
func refEnds(v, upTo *float64) []float64 {
	switch {
	case v == nil:
		return nil
	case upTo == nil:
		return []float64{*v}
	}
	return []float64{*v, *upTo}
}

// addRefMarkers adds published values as bold × markers in each series'
// colour and one legend entry for them.
func addRefMarkers(p *plot.Plot, leg *plot.Legend, pts plotter.XYs, cols []color.Color) {
	if len(pts) == 0 {
		return
	}
	for i, pt := range pts {
		s, err := plotter.NewScatter(plotter.XYs{pt})
		if err != nil {
			continue
		}
		s.GlyphStyle = refGlyph(cols[i])
		p.Add(s)
	}
	leg.Add("published", glyphThumb{refGlyph(color.Gray{Y: 0x40})})
}

func render(f figure, p *plot.Plot, leg plot.Legend, w, h vg.Length) figure {
	svg, err := renderSVG(p, leg, w, h, f.Title)
	if err != nil {
		f.Missing = "Figure could not be drawn: " + err.Error()
		return f
	}
	f.SVG = svg
	return f
}
