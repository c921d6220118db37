package report

import (
	"fmt"

	"gonum.org/v1/plot/plotter"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// acrossMetrics are the metrics a sweep is drawn by across datapaths,
// the first the sweep has: throughput for bulk sweeps, transactions for
// request/response ones, requests for HTTP load (seed 004's Table II),
// start-up time for pod bursts (seed 004's Fig. 15b).
var acrossMetrics = []string{results.MetricBitrate, mTPS, results.MetricRequests, mStartup}

// sweepsAcrossDatapaths draws each swept workload once with one line per
// datapath (seed 001's Figs 6 and 7: throughput against the number of
// flows, per attachment mode): the per-datapath sweep figures cannot show
// where two modes cross.
func sweepsAcrossDatapaths(s *study.Study, rows []analysis.Row) []figure {
	idx := analysis.Index(rows)
	type key struct{ base, impairment string }
	var order []key
	byKey := map[key][]analysis.Sweep{}
	for _, sw := range analysis.Sweeps(s, rows) {
		if len(sw.Variants) < 2 {
			continue
		}
		k := key{sw.Base, sw.Impairment}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], sw)
	}
	var figs []figure
	for _, k := range order {
		if f, ok := acrossFigure(byKey[k], sweepBase(s, k.base), idx); ok {
			figs = append(figs, f)
		}
	}
	return figs
}

// acrossMetric is the metric a workload's sweeps (one per datapath) are
// drawn by: the first of acrossMetrics two of them have; "" for none.
func acrossMetric(sws []analysis.Sweep, idx map[analysis.Key]analysis.Row) string {
	for _, m := range acrossMetrics {
		n := 0
		for _, sw := range sws {
			if (sweepData{sw: sw, idx: idx}).has(m) {
				n++
			}
		}
		if n > 1 {
			return m
		}
	}
	return ""
}

// drawnAcross maps each variant of a sweep sweepsAcrossDatapaths draws
// to the metric it draws it by: the datapath bar charts leave those out
// of that metric's figures (cni-compare's 18 bitrate bars a datapath
// had two workloads in one colour of the palette's 8), the tables keep
// them.
func drawnAcross(s *study.Study, rows []analysis.Row) map[string]string {
	idx := analysis.Index(rows)
	type key struct{ base, impairment string }
	byKey := map[key][]analysis.Sweep{}
	for _, sw := range analysis.Sweeps(s, rows) {
		if len(sw.Variants) >= 2 {
			k := key{sw.Base, sw.Impairment}
			byKey[k] = append(byKey[k], sw)
		}
	}
	out := map[string]string{}
	for _, sws := range byKey {
		if m := acrossMetric(sws, idx); m != "" {
			for _, sw := range sws {
				for _, v := range sw.Variants {
					out[v.Name] = m
				}
			}
		}
	}
	return out
}

// acrossFigure draws one workload's sweeps (one per datapath) on shared
// axes: x is the swept value (axisOf).
func acrossFigure(sws []analysis.Sweep, base study.Workload, idx map[analysis.Key]analysis.Row) (figure, bool) {
	metric := acrossMetric(sws, idx)
	if metric == "" {
		return figure{}, false
	}
	sc := analysis.Display(metric)
	name := sws[0].Base
	if sws[0].Impairment != "" {
		name += " / " + sws[0].Impairment
	}
	title := fmt.Sprintf("%s per datapath (%s)", metric, name)
	ax := axisOf(base, sws[0].Variants)
	p := newPlot(title, ax.title, sc.Unit)
	leg := newLegend()
	var drawn []analysis.Row
	for i, sw := range sws {
		d := sweepData{sw: sw, idx: idx}
		addLine(p, &leg, sw.Datapath, i, xyCI(d, ax.at, metric, sc.Factor))
		drawn = append(drawn, d.rows(metric)...)
	}
	p.Add(plotter.NewGrid())
	ax.apply(p)
	f := figure{Title: title, Caption: fmt.Sprintf(
		"%s of each variant of %s, one line per datapath, at tuning %s and %d replica%s: %s. "+
			"Datapaths this machine could not build are absent.", analysis.WithUnit(metric, sc.Unit), name, sws[0].Tuning, sws[0].Replicas,
		plural(sws[0].Replicas), meanNote(drawn, metric))}
	padY(p)
	return render(f, p, leg, figW, figH), true
}
