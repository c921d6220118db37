package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// impairmentMetrics are what the seed-003 paper plots per impairment
// (Figs 4-7 and Tables VII-VIII): receiver bitrate, jitter, lost
// datagrams and TCP retries.
var impairmentMetrics = []string{results.MetricBitrate, "sender_bitrate", results.MetricJitter, "lost_percent", results.MetricRetransmits}

// impairmentFigures draws, per workload variant and metric, one bar per
// datapath at each impairment of the study (x: impairments in study
// order), at the baseline tuning and smallest replica count. Nothing when
// the study has fewer than two impairments.
func impairmentFigures(s *study.Study, rows []analysis.Row) []figure {
	if s == nil || len(s.Spec.Impairments) < 2 || len(rows) == 0 {
		return nil
	}
	dims := analysis.DimsOf(rows)
	tuning := s.Spec.Baseline
	if tuning == "" && len(dims.Tunings) > 0 {
		tuning = dims.Tunings[0]
	}
	reps := dims.Replicas[0]
	idx := analysis.Index(rows)
	imps := s.ImpairmentCells()
	var figs []figure
	for _, w := range s.Variants() {
		for _, metric := range impairmentMetrics {
			row := func(dp, imp string) (analysis.Row, bool) {
				c := results.Cell{Datapath: dp, Tuning: tuning, Workload: w.Name, Replicas: reps, Impairment: imp}
				r, ok := idx[analysis.Key{Cell: c, Metric: metric, CPU: -1}]
				return r, ok && r.N > 0
			}
			sc := analysis.Display(metric)
			bars := &groupedBars{Groups: len(imps), Fill: 0.8, Missing: missingMark}
			leg := newLegend()
			var drawn []analysis.Row
			for i, dp := range dims.Datapaths {
				ser := barSeries{Color: seriesColor(i)}
				has := false
				for _, imp := range imps {
					m, lo, hi := math.NaN(), math.NaN(), math.NaN()
					if r, ok := row(dp, imp); ok {
						m, lo, hi = r.Mean*sc.Factor, r.CI95Low*sc.Factor, r.CI95High*sc.Factor
						has, drawn = true, append(drawn, r)
					}
					ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, m), append(ser.Lo, lo), append(ser.Hi, hi)
				}
				if has {
					bars.Series = append(bars.Series, ser)
					leg.Add(dp, barThumb{ser.Color})
				}
			}
			if len(bars.Series) == 0 {
				continue
			}
			title := fmt.Sprintf("%s by impairment (%s)", metric, w.Name)
			f := figure{Title: title, Caption: fmt.Sprintf(
				"%s of %s per impairment and datapath at tuning %s and %d replica%s: %s.",
				analysis.WithUnit(metric, sc.Unit), w.Name, tuning, reps, plural(reps), meanNote(drawn, metric))}
			if bars.anyMissing() {
				f.Caption += " " + missingBarsNote
			}
			p := newPlot(title, "impairment", analysis.WithUnit(metric, sc.Unit))
			grid := plotter.NewGrid()
			grid.Vertical.Color = nil
			p.Add(grid, bars)
			var ticks []plot.Tick
			for gi, imp := range imps {
				if imp == "" {
					imp = study.NoImpairment
				}
				ticks = append(ticks, plot.Tick{Value: float64(gi), Label: imp})
			}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = -1
			wd := math.Min(1600, math.Max(coreW, float64(120+len(imps)*(len(bars.Series)*10+14))))
			f.Wide = wd > coreW
			figs = append(figs, render(f, p, leg, vg.Length(wd), coreH))
		}
	}
	return figs
}

// tcpSeries are the per-interval series drawn per second: the seed-003
// paper's Fig 8 (fig8) plots the sender's throughput, congestion window
// and retransmits; the receiver's throughput is beside them, since
// under delay and loss it lags and smooths what the sender wrote (the
// paper's Fig 9 sets the two side by side). A run recorded before the
// sender's series was kept has only the receiver's.
var tcpSeries = []struct {
	name, label, unit string
	fig8              bool
}{
	{"sender_bitrate_bps", "sender throughput", "Mbit/s", true},
	{"bitrate_bps", "receiver throughput", "Mbit/s", false},
	{"snd_cwnd_bytes", "congestion window", "KB", true},
	{"retransmits_count", "retransmits", "count", true},
}

// seriesFigures draws, for each TCP workload of a study with
// impairments at its highest offered rate (the last variant of its
// sweep), the per-second series of the first trial's first pair, as the
// paper's Fig 8 does at 1500 Mbit/s: a figure per datapath and series,
// one line per impairment, at the baseline tuning and smallest replica
// count as impairmentFigures (a line per sample put flannel-backends'
// 16 impairments of two datapaths, and each tuning's again, on one
// figure in 8 colours).
func seriesFigures(s *study.Study, samples []results.Sample) []figure {
	if s == nil || len(s.Spec.Impairments) == 0 {
		return nil
	}
	var figs []figure
	for _, w := range s.Spec.Workloads {
		if w.Protocol != "tcp" {
			continue
		}
		vs := w.Variants()
		v := vs[len(vs)-1]
		tuning, reps, dps, byDP := firstTrials(s, samples, v.Name)
		for _, dp := range dps {
			for _, ser := range tcpSeries {
				lines := seriesLines(s, byDP[dp], ser.name, map[string]float64{"Mbit/s": 1e-6, "KB": 1e-3, "count": 1}[ser.unit])
				if len(lines) == 0 {
					continue
				}
				title := fmt.Sprintf("TCP %s per second (%s) on %s", ser.label, v.Name, dp)
				note := " (the paper's Fig 8 plots the sender's throughput)"
				if ser.fig8 {
					note = " (the paper's Fig 8)"
				}
				f := figure{Title: title, Caption: fmt.Sprintf("%s of %s on %s each second of the first trial (first pair), one line per impairment, "+
					"at tuning %s and %d replica%s%s.", ser.label, v.Name, dp, tuning, reps, plural(reps), seed003Note(s, note))}
				p := newPlot(title, "second", ser.unit)
				leg := newLegend()
				for _, sl := range lines {
					l, pts, err := plotter.NewLinePoints(sl.Points)
					if err != nil {
						continue
					}
					l.Color, l.Dashes, l.Width = sl.Color, sl.Dashes, vg.Points(1.2)
					pts.Color, pts.Shape, pts.Radius = sl.Color, sl.Shape, vg.Points(2)
					p.Add(l, pts)
					leg.Add(sl.Label, l, pts)
				}
				padY(p)
				figs = append(figs, render(f, p, leg, figW, figH))
			}
		}
	}
	return figs
}

// firstTrials are the samples seriesFigures draws of a workload variant:
// per datapath (dps, in the study's order) and impairment the counted
// first trial with series, at the baseline tuning and the smallest
// replica count any such trial ran at.
func firstTrials(s *study.Study, samples []results.Sample, variant string) (tuning string, reps int, dps []string, byDP map[string]map[string]results.Sample) {
	tuning = s.Spec.Baseline
	if tuning == "" && len(s.Spec.Tunings) > 0 {
		tuning = s.Spec.Tunings[0].Name
	}
	var got []results.Sample
	for _, smp := range samples {
		if smp.Cell.Workload == variant && smp.Cell.Tuning == tuning && smp.Trial == 1 && smp.Counted() && len(smp.Series) > 0 {
			got = append(got, smp)
			if reps == 0 || smp.Cell.Replicas < reps {
				reps = smp.Cell.Replicas
			}
		}
	}
	byDP = map[string]map[string]results.Sample{}
	for _, smp := range got {
		dp := smp.Cell.Datapath
		if smp.Cell.Replicas != reps {
			continue
		}
		if byDP[dp] == nil {
			byDP[dp] = map[string]results.Sample{}
		}
		if _, dup := byDP[dp][smp.Cell.Impairment]; !dup {
			byDP[dp][smp.Cell.Impairment] = smp
		}
	}
	for _, d := range s.Spec.Datapaths {
		if byDP[d.Name] != nil {
			dps = append(dps, d.Name)
		}
	}
	return tuning, reps, dps, byDP
}

// seriesLine is one line of a per-second figure: an impairment's.
type seriesLine struct {
	Label  string
	Color  color.Color
	Dashes []vg.Length
	Shape  draw.GlyphDrawer
	Points plotter.XYs
}

// seriesLines are a datapath's lines of one series, one per impairment
// in the study's order, scaled to the figure's unit; an impairment with
// fewer than two finite points has none.
func seriesLines(s *study.Study, byImp map[string]results.Sample, series string, scale float64) []seriesLine {
	var out []seriesLine
	for i, imp := range s.ImpairmentCells() {
		smp, ok := byImp[imp]
		if !ok {
			continue
		}
		var pts plotter.XYs
		for j, y := range smp.Series[0][series] {
			if analysis.Finite(y) {
				pts = append(pts, plotter.XY{X: float64(j + 1), Y: y * scale})
			}
		}
		if len(pts) < 2 {
			continue
		}
		if imp == "" {
			imp = study.NoImpairment
		}
		c, d, sh := lineStyle(i)
		out = append(out, seriesLine{Label: imp, Color: c, Dashes: d, Shape: sh, Points: pts})
	}
	return out
}

// lineDashes are the dash patterns that, after the palette's colours,
// tell lines apart: solid, dashed, dotted.
var lineDashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}}

// lineStyle is the i-th line's colour, dashes and glyph: the palette's
// colours solid, then dashed, then dotted, so no two of the first 24
// share colour and dashes (flannel-backends has 16 impairments), with a
// glyph of its own besides for greyscale.
func lineStyle(i int) (color.Color, []vg.Length, draw.GlyphDrawer) {
	return seriesColor(i), lineDashes[(i/len(palette))%len(lineDashes)], seriesShape(i)
}
