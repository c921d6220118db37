package report

import (
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// HTTP figures and latency CDFs (ab's and sockperf's percentiles).

func httpFigures(d sweepData, name string, samples []results.Sample) []figure {
	var out []figure
	title := "HTTP requests/s vs concurrency (" + name + ")"
	f := figure{Title: title, Caption: "ab against nginx serving the study's body size, one connection per request; " + meanNote(d.rows(mRPS), mRPS) + "."}
	p := newPlot(title, "concurrency (ab -c)", "requests/s")
	p.Y.Min = 0
	leg := newLegend()
	xOf := func(v study.Workload) (float64, bool) { return float64(v.Concurrent()), true }
	if !addLine(p, &leg, "requests/s", 0, xyCI(d, xOf, mRPS, 1)) {
		f.Missing = "no data"
		out = append(out, f)
	} else {
		padY(p)
		out = append(out, render(f, p, leg, figW, figH))
	}
	out = append(out, cdfFigure(d, "HTTP latency CDF ("+name+")", "request latency (ms, log scale)", "cdf_latency_ms", samples,
		"Cumulative share of requests served within a latency (ab -e percentiles, first trial of each concurrency)."))
	return out
}

// cdfFigure draws each variant's CDF series from its first sample.
func cdfFigure(d sweepData, title, xlabel, series string, samples []results.Sample, caption string) figure {
	f := figure{Title: title, Caption: caption}
	p := newPlot(title, xlabel, "fraction")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	leg := newLegend()
	drawn := false
	for i, v := range d.sw.Variants {
		cell := d.sw.Cell(v)
		for _, smp := range samples {
			if smp.Cell != cell || len(smp.Series) == 0 {
				continue
			}
			xs, fs := smp.Series[0][series], smp.Series[0]["cdf_fraction"]
			var pts plotter.XYs
			for j := range xs {
				if j < len(fs) && xs[j] > 0 && analysis.Finite(xs[j]) {
					pts = append(pts, plotter.XY{X: xs[j], Y: fs[j]})
				}
			}
			sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
			if len(pts) > 1 {
				if l, err := plotter.NewLine(pts); err == nil {
					// Colour and dashes: twelve concurrencies outnumber
					// the palette's colours (c=400 drew as c=50 did).
					l.Color, l.Dashes, _ = lineStyle(i)
					l.Width = vg.Points(1.5)
					p.Add(l)
					leg.Add(paramLabel(v), l)
					drawn = true
				}
			}
			break
		}
	}
	if !drawn {
		f.Missing = "no latency distribution recorded"
		return f
	}
	// A CDF ends at 1: room above it keeps its top off the frame.
	p.Y.Min, p.Y.Max = 0, 1+headroom
	return render(f, p, leg, figW, figH)
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten, with
// unlabelled marks between: gonum's LogTicks labels powers of ten only,
// which left a latency CDF spanning 3 to 90 ms one label, "10".
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for p := math.Pow10(int(math.Floor(math.Log10(lo)))); p <= hi; p *= 10 {
		for i := 1; i < 10; i++ {
			v := p * float64(i)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if i == 1 || i == 2 || i == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			out = append(out, t)
		}
	}
	if !slices.ContainsFunc(out, func(t plot.Tick) bool { return t.Label != "" }) {
		// Within one 1-2-5 step (11 to 19 ms): label the ends.
		out = append(out, plot.Tick{Value: lo, Label: strconv.FormatFloat(lo, 'g', 3, 64)},
			plot.Tick{Value: hi, Label: strconv.FormatFloat(hi, 'g', 3, 64)})
	}
	return out
}
