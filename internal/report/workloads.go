package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
)

// Workload figures: one set per study workload (a sweep's variants drawn
// against the swept value), chosen by the metrics the workload produced:
//
//	UDP (lost_percent)          received vs offered; loss % and jitter vs offered
//	request/response (sockperf) RTT percentiles per message size; RTT CDF
//	request/response (qperf)    mean RTT per message size (qperf has no percentiles)
//	HTTP (ab)                   requests/s vs concurrency; latency CDF
//	background load             measured bitrate vs background connections
//	other iperf3 sweeps         bitrate vs the swept value
//	CPP                         stacked ns or cycles/packet by component, per datapath
//
// Metric names are those of the workload drivers; they are spelled out
// here rather than imported so the report does not depend on drivers.
const (
	mOffered  = "offered_bps"
	mLostPct  = "lost_percent"
	mJitter   = results.MetricJitter
	mTPS      = "transactions_per_s"
	mRPS      = "requests_per_s"
	mBgBitrat = "background_bitrate_bps"
	mRTTMean  = "rtt_mean_us"
	mSentBit  = iperf3.MetricSenderBitrate
	mSentPkt  = iperf3.MetricSent // what pktgen sent
)

var rttPercentiles = []struct{ metric, label string }{
	{"rtt_p50_us", "p50"}, {"rtt_p90_us", "p90"}, {"rtt_p99_us", "p99"}, {"rtt_p999_us", "p99.9"},
}

// workloadSection is the report's "Workloads" part. A sweep (a workload
// that expands into NAME@VALUE variants) is shown once: its figures and
// one compact table with a row per swept value, never a section per
// variant. Workloads that do not sweep keep their figures here, their
// headline numbers in one table, and their own per-cell section below.
type workloadSection struct {
	// Intro says what the section's table shows (workloadIntro).
	Intro   string
	Figures []figure // non-swept workloads' figures and the CPP bars
	Table   table    // headline numbers of the non-swept workloads
	Sweeps  []sweepView
}

// sweepView is one swept workload at one datapath.
type sweepView struct {
	Title, Caption string
	Table          table
	Figures        []figure
}

func (w workloadSection) empty() bool { return len(w.Figures) == 0 && len(w.Sweeps) == 0 }

func buildWorkloads(s *study.Study, m analysis.Model, samples []results.Sample) workloadSection {
	n := newNumbers(m)
	summaries := map[[3]string]analysis.SweepSummary{}
	for _, sw := range m.Sweeps {
		summaries[[3]string{sw.Datapath, sw.Workload, sw.Impairment}] = sw
	}
	var sec workloadSection
	var cppBars []stackBar
	for _, sw := range analysis.Sweeps(s, m.Rows) {
		d := sweepData{sw: sw, idx: n.idx, base: sweepBase(s, sw.Base)}
		figs, bars := sweepFigures(d, samples)
		cppBars = append(cppBars, bars...)
		if len(sw.Variants) > 1 {
			v := n.sweepSummary(summaries[[3]string{sw.Datapath, sw.Base, sw.Impairment}])
			v.Figures = figs
			sec.Sweeps = append(sec.Sweeps, v)
		} else {
			sec.Figures = append(sec.Figures, figs...)
		}
	}
	// One figure per unit: a run samples one event, but a study's rows
	// never put ns and cycles on one axis even if they had both.
	for _, u := range cpp.Units {
		var bars []stackBar
		for _, b := range cppBars {
			if b.unit == u {
				bars = append(bars, b)
			}
		}
		if len(bars) > 0 {
			sec.Figures = append(sec.Figures, cppFigure(bars, u))
		}
	}
	sec.Figures = append(sec.Figures, stepsFigures(cppBars)...)
	if !sec.empty() {
		var shown []analysis.Row
		sec.Table, shown = workloadTable(s, n)
		sec.Intro = workloadIntro(shown, n)
	}
	return sec
}

// sweepFigures draws one workload's figures by the metrics it produced;
// CPP workloads give bars for the shared CPP figure instead.
func sweepFigures(d sweepData, samples []results.Sample) ([]figure, []stackBar) {
	sw := d.sw
	name := sw.Datapath + " / " + sw.Base
	if sw.Impairment != "" {
		name += " / " + sw.Impairment
	}
	switch {
	case d.has(cpp.MetricTotal) || d.has(cpp.MetricTotalCycles):
		var bars []stackBar
		for _, v := range sw.Variants {
			if b, ok := cppBarOf(d, v); ok {
				bars = append(bars, b)
			}
		}
		return nil, bars
	case d.has(mStartup):
		var bars []stackBar
		if b, ok := stepsBarOf(d); ok {
			bars = append(bars, b)
		}
		return []figure{startupFigure(d, name)}, bars
	case d.has(mLostPct):
		return udpFigures(d, name), nil
	case d.has(mTPS):
		return rrFigures(d, name, samples), nil
	case d.has(mRPS):
		return httpFigures(d, name, samples), nil
	case len(sw.Variants) > 1 && sw.Variants[0].Background != nil:
		figs := []figure{backgroundFigure(d, name)}
		if f, ok := backgroundCPUFigure(d, name); ok {
			figs = append(figs, f)
		}
		return figs, nil
	case len(sw.Variants) > 1 && d.has(results.MetricBitrate):
		return []figure{sweepFigure(d, name)}, nil
	}
	return nil, nil
}

// addLine draws a curve: its points with 95% whiskers, joined within
// each segment only (xyCI breaks them at variants without a value).
func addLine(p *plot.Plot, leg *plot.Legend, label string, i int, cv curve) bool {
	pts, errs := cv.pts, cv.errs
	if len(pts) == 0 {
		return false
	}
	col := seriesColor(i)
	for _, seg := range cv.segs {
		if l, err := plotter.NewLine(seg); err == nil && len(seg) > 1 {
			l.Color, l.Width = col, vg.Points(1.5)
			p.Add(l)
		}
	}
	sc, err := plotter.NewScatter(pts)
	if err == nil {
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: seriesShape(i)}
		p.Add(sc)
		leg.Add(label, sc)
	}
	eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1)}, CapWidth: vg.Points(6)}
	p.Add(eb)
	return true
}

func offeredX(d sweepData) func(study.Workload) (float64, bool) {
	return func(v study.Workload) (float64, bool) {
		if r, ok := d.row(v, mOffered); ok {
			return r.Mean / 1e6, true
		}
		x, ok := study.ParseRate(v.Rate)
		return x / 1e6, ok
	}
}

func udpFigures(d sweepData, name string) []figure {
	xOf := offeredX(d)
	var out []figure
	{
		title := "UDP received vs offered bitrate (" + name + ")"
		// iperf3 counts both ends in its intervals; pktgen's sender
		// records what it sent (sent_bps) and the receiving device's
		// counters what arrived, so the "sent" line and the caption
		// follow the sender: a generator falling behind shows only there.
		sent, source := mSentBit, "iperf3 server intervals"
		if d.has(mSentPkt) {
			sent, source = mSentPkt, "pktgen sender; what arrived is the receiving device's packet counter"
		}
		f := figure{Title: title, Caption: "Receiver bitrate over the measured window (" + source + ") against the offered rate (-b x streams): " +
			meanNote(d.rows(results.MetricBitrate, sent), results.MetricBitrate, sent) + "; the dashed line is received = offered."}
		p := newPlot(title, "offered (Mbit/s)", "Mbit/s")
		leg := newLegend()
		cv := xyCI(d, xOf, results.MetricBitrate, 1e-6)
		if !addLine(p, &leg, "received", 0, cv) {
			f.Missing = "no UDP samples"
			out = append(out, f)
		} else {
			maxX := 0.0
			for _, pt := range cv.pts {
				maxX = math.Max(maxX, pt.X)
			}
			if l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: maxX, Y: maxX}}); err == nil {
				l.Color, l.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
				p.Add(l)
				leg.Add("offered", l)
			}
			addLine(p, &leg, "sent", 1, xyCI(d, xOf, sent, 1e-6))
			padY(p)
			out = append(out, render(f, p, leg, figW, figH))
		}
	}
	for i, m := range []struct{ metric, label, unit, note string }{
		{mLostPct, "lost datagrams", "%", "; loss % is lost / (received + lost) datagrams of the same window"},
		{mJitter, "jitter", "ms", ""}, // the loss formula was its caption's too
	} {
		title := fmt.Sprintf("UDP %s vs offered bitrate (%s)", m.label, name)
		f := figure{Title: title, Caption: fmt.Sprintf("%s at the receiver over the measured window (%s): %s%s.", m.label, m.unit, meanNote(d.rows(m.metric), m.metric), m.note)}
		p := newPlot(title, "offered (Mbit/s)", m.unit)
		leg := newLegend()
		if !addLine(p, &leg, m.label, i+2, xyCI(d, xOf, m.metric, 1)) {
			f.Missing = "no data"
			out = append(out, f)
			continue
		}
		padY(p)
		out = append(out, render(f, p, leg, figW, figH))
	}
	return out
}

// rrFigures draws a request/response workload's round-trip times per
// variant: sockperf's percentiles and their CDF, or, for a tool that
// reports only the mean (qperf), the mean per variant, and no figure of
// a single variant (the tables have its mean): empty percentile bars and a
// CDF saying "none recorded" would suggest a failed measurement.
func rrFigures(d sweepData, name string, samples []results.Sample) []figure {
	var out []figure
	var series []struct{ metric, label string }
	var metrics []string
	for _, pc := range rttPercentiles {
		if d.has(pc.metric) {
			series, metrics = append(series, pc), append(metrics, pc.metric)
		}
	}
	if len(series) == 0 && len(d.sw.Variants) < 2 {
		return nil // one mean: the tables have it
	}
	title := "Round-trip latency percentiles (" + name + ")"
	f := figure{Title: title, Caption: "sockperf ping-pong RTT percentiles (µs) per variant (message size), " +
		meanNote(d.rows(metrics...), metrics...) + "; transactions/s of each variant are in the table above."}
	if len(series) == 0 {
		title = "Mean round-trip time (" + name + ")"
		f = figure{Title: title, Caption: d.sw.Variants[0].Tool + " ping-pong mean RTT (µs) per variant, " + meanNote(d.rows(mRTTMean), mRTTMean) +
			"; the tool reports no percentiles. Transactions/s of each variant are in the table above."}
		series = append(series, struct{ metric, label string }{mRTTMean, "mean"})
	}
	p := newPlot(title, analysis.SweptParam(d.base), "RTT (µs)")
	leg := newLegend()
	bars := &groupedBars{Groups: len(d.sw.Variants), Fill: 0.8, Missing: missingMark}
	var ticks []plot.Tick
	for g, v := range d.sw.Variants {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: paramLabel(v)})
	}
	for i, pc := range series {
		ser := barSeries{Color: seriesColor(i)}
		for _, v := range d.sw.Variants {
			r, ok := d.row(v, pc.metric)
			if !ok {
				ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, math.NaN()), append(ser.Lo, math.NaN()), append(ser.Hi, math.NaN())
				continue
			}
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, r.Mean), append(ser.Lo, r.CI95Low), append(ser.Hi, r.CI95High)
		}
		bars.Series = append(bars.Series, ser)
		leg.Add(pc.label, barThumb{seriesColor(i)})
	}
	p.Add(bars)
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if bars.anyMissing() {
		f.Caption += " " + missingBarsNote
	}
	out = append(out, render(f, p, leg, figW, figH))
	if series[0].metric == mRTTMean {
		return out
	}
	out = append(out, cdfFigure(d, "Round-trip latency CDF ("+name+")", "RTT (µs, log scale)", "cdf_rtt_us", samples,
		"Cumulative share of round trips within a latency, from sockperf's percentiles (first trial of each variant; min to max)."))
	return out
}

func backgroundFigure(d sweepData, name string) figure {
	title := "Measured bitrate vs background connections (" + name + ")"
	v0 := d.sw.Variants[0]
	f := figure{Title: title, Caption: fmt.Sprintf("One measured iperf3 TCP flow beside K background connections capped at %s each, spread over %d background pod pairs; %s.",
		v0.Background.Rate, v0.Background.Pairs, meanNote(d.rows(results.MetricBitrate, mBgBitrat), results.MetricBitrate, mBgBitrat))}
	p := newPlot(title, "background connections", "Gbit/s")
	p.Y.Min = 0
	leg := newLegend()
	xOf := func(v study.Workload) (float64, bool) { return float64(v.BackgroundConnections()), true }
	if !addLine(p, &leg, "measured flow", 0, xyCI(d, xOf, results.MetricBitrate, 1e-9)) {
		f.Missing = "no data"
		return f
	}
	addLine(p, &leg, "background total", 1, xyCI(d, xOf, mBgBitrat, 1e-9))
	padY(p)
	return render(f, p, leg, figW, figH)
}

// sweepFigure draws the bitrate of an iperf3 sweep: a line against the
// swept value where it is a number (axisOf), else a bar per variant.
func sweepFigure(d sweepData, name string) figure {
	ax := axisOf(d.base, d.sw.Variants)
	note := meanNote(d.rows(results.MetricBitrate), results.MetricBitrate)
	if ax.numeric {
		title := "Bitrate vs " + analysis.SweptParam(d.base) + " (" + name + ")"
		f := figure{Title: title, Caption: "Receiver bitrate at each swept value, placed by value: " + note + "."}
		p := newPlot(title, ax.title, "Gbit/s")
		p.Y.Min = 0
		leg := newLegend()
		if !addLine(p, &leg, "bitrate", 0, xyCI(d, ax.at, results.MetricBitrate, 1e-9)) {
			f.Missing = "no data"
			return f
		}
		ax.apply(p)
		padY(p)
		return render(f, p, leg, figW, figH)
	}
	title := "Bitrate per variant (" + name + ")"
	f := figure{Title: title, Caption: "Receiver bitrate of each variant of the sweep: " + note + "."}
	p := newPlot(title, ax.title, "Gbit/s")
	leg := newLegend()
	bars := &groupedBars{Groups: len(d.sw.Variants), Fill: 0.6, Missing: missingMark}
	ser := barSeries{Color: seriesColor(0)}
	for _, v := range d.sw.Variants {
		if r, ok := d.row(v, results.MetricBitrate); ok {
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, r.Mean*1e-9), append(ser.Lo, r.CI95Low*1e-9), append(ser.Hi, r.CI95High*1e-9)
		} else {
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, math.NaN()), append(ser.Lo, math.NaN()), append(ser.Hi, math.NaN())
		}
	}
	bars.Series = []barSeries{ser}
	if bars.anyMissing() {
		f.Caption += " " + missingBarsNote
	}
	p.Add(bars)
	p.X.Tick.Marker = plot.ConstantTicks(ax.ticks)
	leg.Add("bitrate", barThumb{seriesColor(0)})
	return render(f, p, leg, figW, figH)
}

func paramLabel(v study.Workload) string {
	if v.Param != "" {
		return v.Param
	}
	return v.Name
}

// workloadTable lists the headline numbers of every workload that does
// not sweep, and the rows those cells rest on (for workloadIntro). A
// planned cell without a value (every trial failed) keeps its line, its
// cells "missing": dropping it read as if the study never asked for it.
func workloadTable(s *study.Study, n *numbers) (table, []analysis.Row) {
	rows, idx := n.Rows, n.idx
	metrics := analysis.HeadlineMetrics
	t := table{Head: []string{"datapath", "workload"}}
	used := map[string]bool{}
	swept := analysis.SweptVariants(s)
	for _, r := range rows {
		if !swept[r.Workload] && r.CPU < 0 {
			// A headline metric has rows only where some sample had it,
			// or as a workload without samples' one row (N = 0).
			used[r.Metric] = true
		}
	}
	var shown []string
	for _, m := range metrics {
		if used[m] {
			shown = append(shown, m)
			sc := analysis.Display(m)
			t.Head = append(t.Head, analysis.WithUnit(m, sc.Unit))
		}
	}
	var drawn []analysis.Row
	for _, sw := range analysis.Sweeps(s, rows) {
		if len(sw.Variants) > 1 {
			continue // a sweep has its own table (sweepSummary)
		}
		for _, v := range sw.Variants {
			row := []string{sw.Datapath, v.Name + impairmentSuffix(sw.Impairment)}
			planned := false
			for _, m := range shown {
				r, ok := idx[analysis.Key{Cell: sw.Cell(v), Metric: m, CPU: -1}]
				if !ok {
					row = append(row, "")
					continue
				}
				planned = true
				row = append(row, analysis.Display(m).MeanCI(r)+n.nText(r))
				if r.N > 0 {
					drawn = append(drawn, r)
				}
			}
			if planned {
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t, drawn
}

// workloadIntro opens the Workloads section: where its cells are and
// what its table's cells hold (shownOf: a run of one trial per cell has
// no interval to show), with the (n=K) mark's meaning where a cell has
// one.
func workloadIntro(rows []analysis.Row, n *numbers) string {
	text := "Each workload of the study at the baseline tuning and smallest replica count."
	if len(rows) == 0 {
		return text
	}
	text += " The table: " + shownOf(rows)
	if slices.ContainsFunc(rows, func(r analysis.Row) bool { return n.nText(r) != "" }) {
		text += "; \"(n=K)\" marks a cell with fewer or more trials than planned"
	}
	return text + "."
}

// impairmentSuffix names an impairment after a workload in a table cell.
func impairmentSuffix(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}
