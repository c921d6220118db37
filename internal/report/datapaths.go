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

// comparedMetrics are drawn side by side across datapaths, in this order,
// when a run has more than one datapath.
var comparedMetrics = []string{results.MetricBitrate, mTPS, "rtt_p50_us", "rtt_p99_us", "lost_percent", "jitter_ms", "pod_setup_ms", "daemons_rss_bytes"}

// datapathFigures compares datapaths: for each metric, grouped bars with
// datapaths on x and one bar per workload, at the baseline tuning and the
// smallest replica count (the comparison a reader of seeds 001 and 004
// wants), with 95% interval whiskers; plus a table of the same numbers.
func datapathFigures(s *study.Study, rows []analysis.Row) ([]figure, []table) {
	dims := analysis.DimsOf(rows)
	if len(dims.Datapaths) < 2 || len(dims.Replicas) == 0 {
		return nil, nil
	}
	tuning := s.Spec.Baseline
	if tuning == "" && len(dims.Tunings) > 0 {
		tuning = dims.Tunings[0]
	}
	reps := dims.Replicas[0]
	idx := analysis.Index(rows)
	row := func(dp, wl, metric string) (analysis.Row, bool) {
		r, ok := idx[analysis.Key{Cell: results.Cell{Datapath: dp, Tuning: tuning, Workload: wl, Replicas: reps}, Metric: metric, CPU: -1}]
		return r, ok && r.N > 0
	}
	var figs []figure
	var tables []table
	for _, metric := range comparedMetrics {
		var wls []string
		for _, wl := range dims.Workloads {
			for _, dp := range dims.Datapaths {
				if _, ok := row(dp, wl, metric); ok {
					wls = append(wls, wl)
					break
				}
			}
		}
		if len(wls) == 0 {
			continue
		}
		sc := analysis.Display(metric)
		bars := &groupedBars{Groups: len(dims.Datapaths), Fill: 0.8}
		leg := newLegend()
		tb := table{Head: append([]string{fmt.Sprintf("datapath — %s (%s)", metric, sc.Unit)}, wls...)}
		for i, wl := range wls {
			ser := barSeries{Color: seriesColor(i)}
			for _, dp := range dims.Datapaths {
				m, lo, hi := math.NaN(), math.NaN(), math.NaN()
				if r, ok := row(dp, wl, metric); ok {
					m, lo, hi = r.Mean*sc.Factor, r.CI95Low*sc.Factor, r.CI95High*sc.Factor
				}
				ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, m), append(ser.Lo, lo), append(ser.Hi, hi)
			}
			bars.Series = append(bars.Series, ser)
			leg.Add(wl, barThumb{ser.Color})
		}
		tb.Rows = datapathRows(dims.Datapaths, wls, func(dp, wl string) (analysis.Row, bool) { return row(dp, wl, metric) })
		title := fmt.Sprintf("%s by datapath", metric)
		f := figure{Title: title, Caption: fmt.Sprintf(
			"%s (%s) per datapath and workload at tuning %s and %d replica%s: mean over trials, whiskers are 95%% confidence intervals. "+
				"Datapaths this machine could not build are absent.", metric, sc.Unit, tuning, reps, plural(reps))}
		p := newPlot(title, "datapath", metric+" ("+sc.Unit+")")
		grid := plotter.NewGrid()
		grid.Vertical.Color = nil
		p.Add(grid, bars)
		var ticks []plot.Tick
		for gi, dp := range dims.Datapaths {
			ticks = append(ticks, plot.Tick{Value: float64(gi), Label: dp})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = -1
		p.Y.Max += 0.06 * (p.Y.Max - p.Y.Min)
		w := math.Min(1600, math.Max(coreW, float64(120+len(dims.Datapaths)*(len(wls)*10+14))))
		f.Wide = w > coreW
		figs = append(figs, render(f, p, leg, vg.Length(w), coreH))
		tables = append(tables, tb)
	}
	return figs, tables
}

// datapathRows are a datapath table's rows: per datapath, each workload's
// mean [95% CI] and, beside every datapath but the first, Welch's p
// against the first.
func datapathRows(datapaths, workloads []string, row func(dp, wl string) (analysis.Row, bool)) [][]string {
	var out [][]string
	for _, dp := range datapaths {
		line := []string{dp}
		for _, wl := range workloads {
			r, ok := row(dp, wl)
			if !ok {
				line = append(line, "—")
				continue
			}
			cell := analysis.Display(r.Metric).MeanCI(r)
			if p := analysis.FormatP(r.PFirstDatapath); p != "" {
				cell += "; p" + p
			}
			line = append(line, cell)
		}
		out = append(out, line)
	}
	return out
}
