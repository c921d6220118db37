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
var impairmentMetrics = []string{results.MetricBitrate, "sender_bitrate", "jitter_ms", "lost_percent", results.MetricRetransmits}

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
			for i, dp := range dims.Datapaths {
				ser := barSeries{Color: seriesColor(i)}
				has := false
				for _, imp := range imps {
					m, lo, hi := math.NaN(), math.NaN(), math.NaN()
					if r, ok := row(dp, imp); ok {
						m, lo, hi = r.Mean*sc.Factor, r.CI95Low*sc.Factor, r.CI95High*sc.Factor
						has = true
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
				"%s (%s) of %s per impairment and datapath at tuning %s and %d replica%s: mean over trials, whiskers are 95%% confidence intervals.",
				metric, sc.Unit, w.Name, tuning, reps, plural(reps))}
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
