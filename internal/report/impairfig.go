package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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
			bars := &groupedBars{Groups: len(imps), Fill: 0.8}
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
				"%s (%s) of %s per impairment and datapath at tuning %s and %d replica%s: mean over trials (%s), whiskers are %s.",
				metric, sc.Unit, w.Name, tuning, reps, plural(reps), figureN(drawn, metric), meanWhiskers)}
			p := newPlot(title, "impairment", metric+" ("+sc.Unit+")")
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

// tcpSeries are the per-interval series of the seed-003 paper's Fig 8:
// throughput, congestion window and retransmits per second (the
// sender's, from iperf3's interval sums).
var tcpSeries = []struct{ name, label, unit string }{
	{"bitrate_bps", "throughput", "Mbit/s"},
	{"snd_cwnd_bytes", "congestion window", "KB"},
	{"retransmits_count", "retransmits", "count"},
}

// seriesFigures draws, for each TCP workload of a study with
// impairments at its highest offered rate (the last variant of its
// sweep), the per-second series of the first trial's first pair, one line
// per datapath and impairment, as the paper's Fig 8 does at 1500 Mbit/s.
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
		for _, ser := range tcpSeries {
			title := fmt.Sprintf("TCP %s per second (%s)", ser.label, v.Name)
			f := figure{Title: title, Caption: fmt.Sprintf("%s of %s each second of the first trial (first pair), per datapath and impairment%s.", ser.label, v.Name, seed003Note(s, " (the paper's Fig 8)"))}
			p := newPlot(title, "second", ser.unit)
			leg := newLegend()
			scale := map[string]float64{"Mbit/s": 1e-6, "KB": 1e-3, "count": 1}[ser.unit]
			i := 0
			for _, smp := range samples {
				if smp.Cell.Workload != v.Name || smp.Trial != 1 || len(smp.Series) == 0 {
					continue
				}
				ys := smp.Series[0][ser.name]
				var pts plotter.XYs
				for j, y := range ys {
					if analysis.Finite(y) {
						pts = append(pts, plotter.XY{X: float64(j + 1), Y: y * scale})
					}
				}
				if len(pts) < 2 {
					continue
				}
				l, err := plotter.NewLine(pts)
				if err != nil {
					continue
				}
				l.Color, l.Width = seriesColor(i), vg.Points(1.2)
				p.Add(l)
				name := smp.Cell.Datapath
				if smp.Cell.Impairment != "" {
					name += " / " + smp.Cell.Impairment
				}
				leg.Add(name, l)
				i++
			}
			if i == 0 {
				continue
			}
			padY(p)
			figs = append(figs, render(f, p, leg, figW, figH))
		}
	}
	return figs
}
