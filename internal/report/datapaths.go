package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

// comparedMetrics are drawn side by side across datapaths, in this order,
// when a run has more than one datapath: seed 004 compares its CNIs by
// throughput, 1-byte round trips, HTTP requests (Table II) and CPU cost
// per packet; seed 001 its attachment modes by latency and loss.
var comparedMetrics = []string{results.MetricBitrate, mTPS, results.MetricRequests, sockperf.MetricMean, "rtt_p50_us", "rtt_p99_us",
	"lost_percent", results.MetricJitter, cpp.MetricTotal, cpp.MetricTotalCycles, "pod_setup_ms", "daemons_rss_bytes"}

// dpComparison is one metric compared across datapaths: its workloads
// that some datapath measured, at the baseline tuning and the smallest
// replica count (the comparison a reader of seeds 001 and 004 wants).
type dpComparison struct {
	Metric, Tuning string
	Replicas       int
	Datapaths      []string
	Workloads      []string
	// Labels name the columns: the workload, and how many folded into it.
	Labels []string
	// row is a datapath's row of a workload with a value (N > 0); empty
	// says that it has a row without one: a planned cell no trial
	// measured, shown as missing.
	row   func(dp, wl string) (analysis.Row, bool)
	empty func(dp, wl string) bool
	// absent is what a cell without a value shows where its row is
	// empty (numbers.absent: "missing", or "not run").
	absent func(results.Cell) string
	// decided are the controller's decisions by row (stops.json).
	decided map[analysis.Key]results.Stop
	// paper is a cell's published value, " · paper X" (numbers.paperNote),
	// and whether its placement fell back (numbers.pinNote).
	paper func(analysis.Row) string
	// nText marks a cell of fewer or more trials than planned
	// (numbers.nText), as summary.md's header says every table does.
	nText func(analysis.Row) string
	// disturbed counts each cell's trials counted though disturbed
	// (analysis.CountedDisturbed).
	disturbed map[results.Cell]int
}

// datapathComparisons lists the comparedMetrics the run measured on some
// datapath, when it has more than one datapath, with a column for each
// workload some datapath has a row of the metric for: one no trial
// measured on any datapath (every trial failed, or the run ended first)
// keeps its column, its cells missing, as in the other tables (its
// planned cells' rows, N = 0, analysis.Summarize), rather than vanishing
// as if the study never asked for it.
func datapathComparisons(s *study.Study, m analysis.Model) []dpComparison {
	rows, n := m.Rows, newNumbers(m)
	dims := analysis.DimsOf(rows)
	if len(dims.Datapaths) < 2 || len(dims.Replicas) == 0 {
		return nil
	}
	tuning := s.Spec.Baseline
	if tuning == "" && len(dims.Tunings) > 0 {
		tuning = dims.Tunings[0]
	}
	reps := dims.Replicas[0]
	idx := analysis.Index(rows)
	// A row of N = 0 is also a measured cell's for a metric it does not
	// record (daemons_rss_bytes where the datapath runs no daemon: every
	// cell of a workload has a row of each metric it recorded anywhere);
	// only a cell with no value of any metric is missing.
	measured := map[results.Cell]bool{}
	for _, r := range rows {
		if r.N > 0 {
			measured[r.Cell] = true
		}
	}
	var out []dpComparison
	for _, metric := range comparedMetrics {
		c := dpComparison{Metric: metric, Tuning: tuning, Replicas: reps, Datapaths: dims.Datapaths, decided: n.stops,
			paper:     func(r analysis.Row) string { return n.paperNote(r, false) + n.pinNote(r.Cell) },
			nText:     n.nText,
			absent:    n.absent,
			disturbed: analysis.CountedDisturbed(m.Marked)}
		lookup := func(dp, wl string) (analysis.Row, bool) {
			r, ok := idx[analysis.Key{Cell: results.Cell{Datapath: dp, Tuning: tuning, Workload: wl, Replicas: reps}, Metric: metric, CPU: -1}]
			return r, ok
		}
		c.row = func(dp, wl string) (analysis.Row, bool) {
			r, ok := lookup(dp, wl)
			return r, ok && r.N > 0
		}
		c.empty = func(dp, wl string) bool {
			r, ok := lookup(dp, wl)
			return ok && r.N == 0 && !measured[r.Cell]
		}
		for _, wl := range dims.Workloads {
			for _, dp := range dims.Datapaths {
				if _, ok := lookup(dp, wl); ok {
					c.Workloads = append(c.Workloads, wl)
					break
				}
			}
		}
		if len(c.Workloads) > 0 {
			if slices.Contains(analysis.PodMetrics, metric) {
				c.fold()
			} else {
				c.Labels = c.Workloads
			}
			out = append(out, c)
		}
	}
	return out
}

// fold merges a workload column into an earlier one when, at every
// datapath, both ran on the same pods (analysis.SamePods): one
// measurement recorded in each cell that ran on them (pod_setup_ms), not
// two. The column shows, per datapath, the row of the workload with the
// most trials of it (in a run of several datapaths each round builds new
// pods, and a cell that stopped earlier holds fewer rounds), and says how
// many workloads it stands for.
func (c *dpComparison) fold() {
	// Two columns without a value anywhere (workloads no trial
	// measured) share no pods: they are not one.
	same := func(a, b string) bool {
		both := false
		for _, dp := range c.Datapaths {
			ra, oka := c.row(dp, a)
			rb, okb := c.row(dp, b)
			if oka != okb || oka && !analysis.SamePods(ra, rb) {
				return false
			}
			both = both || oka
		}
		return both
	}
	var keep, labels []string
	members := map[string][]string{}
	for _, wl := range c.Workloads {
		i := slices.IndexFunc(keep, func(k string) bool { return same(k, wl) })
		if i < 0 {
			keep = append(keep, wl)
			members[wl] = []string{wl}
			continue
		}
		members[keep[i]] = append(members[keep[i]], wl)
	}
	for _, wl := range keep {
		if n := len(members[wl]) - 1; n > 0 {
			wl = fmt.Sprintf("%s (+%d, same pods)", wl, n)
		}
		labels = append(labels, wl)
	}
	row := c.row
	c.row = func(dp, wl string) (analysis.Row, bool) {
		best, found := row(dp, wl)
		for _, m := range members[wl] {
			if r, ok := row(dp, m); ok && (!found || r.N > best.N) {
				best, found = r, true
			}
		}
		return best, found
	}
	c.Workloads, c.Labels = keep, labels
}

// table is the comparison's numbers: a row per datapath, a column per
// workload.
func (c dpComparison) table() table {
	tb := table{Head: append([]string{"datapath — " + analysis.Labeled(c.Metric)}, c.Labels...)}
	tb.Rows = c.rows()
	return tb
}

// datapathTables are the comparisons' tables (summary.md's view).
func datapathTables(s *study.Study, m analysis.Model) []table {
	var out []table
	for _, c := range datapathComparisons(s, m) {
		out = append(out, c.table())
	}
	return out
}

// datapathCaption says what the side-by-side tables hold, with the legend
// of the marks their cells carry (dpComparison.marks) where one does.
func datapathCaption(s *study.Study, m analysis.Model) string {
	var spread, disturbed bool
	var rows []analysis.Row
	for _, c := range datapathComparisons(s, m) {
		for _, dp := range c.Datapaths {
			for _, wl := range c.Workloads {
				if r, ok := c.row(dp, wl); ok {
					rows = append(rows, r)
					spread = spread || spreadNote(r) != ""
					disturbed = disturbed || c.countedDisturbed(r.Cell)
				}
			}
		}
	}
	text := datapathTablesHead + shownOf(rows) + datapathTablesText
	if spread {
		text += " " + strings.TrimSpace(spreadLegend("its decision"))
	}
	if disturbed {
		text += " " + strings.TrimSpace(disturbedLegend)
	}
	return text
}

// datapathTablesHead, what the cells show (shownOf) and datapathTablesText
// are datapathCaption without the marks' legend.
const datapathTablesHead = "Each metric per datapath and workload at the baseline tuning and smallest replica count; "

const datapathTablesText = "; \"paper X\" is a published number for the same point. Beside every datapath but the first, " +
	"bitrate and transactions or requests per second (higher better), the latencies' mean, median and 99th percentile and " +
	"the CPU cost per packet (lower better) give their ratio to the first datapath " +
	"(×) with a 95% interval, its method, what it rests on and the decision at the study's margin (better, worse, equal or undecided): " +
	"paired by round (\"paired-t, 6 pairs\") where the datapaths ran in shared rounds, as runs of several datapaths do, and at least 3 " +
	"rounds of both are complete, else Fieller's over all trials (\"fieller, n=2 vs host's 10\": a cell given up after 2 trials has too " +
	"few pairs); a bare ratio is of a single trial, which has no interval and no decision; other metrics " +
	"Welch's p against the first; neither is corrected for the number of cells. In an adaptive run the controller's decision " +
	"stands instead where it made one (\"×0.869 [0.801, 0.942] paired-t (98.75%), at the look after 3 trials: worse\"): judged at its " +
	"planned looks, at their stricter confidence, as in \"Repetitions and decisions\". \"(n=K)\" marks a cell with fewer or more trials " +
	"than planned; \"missing\" where a planned cell has no value of any metric (every trial failed, or the run ended first), " +
	"— where the datapath has no value of the metric (daemon memory where it runs no daemon); " +
	"\"+K, same pods\": K more workloads ran on the same pods, whose set-up is one measurement. " +
	"Datapaths this machine could not build are absent."

// datapathFigures compares datapaths: for each metric, grouped bars with
// datapaths on x and one bar per workload, with 95% interval whiskers;
// plus a table of the same numbers. Workloads whose typical values differ
// by more than scaleSplit get figures of their own (TCP at 12 Gbit/s flattened
// UDP at 1 Gbit/s to nothing on a shared axis); a workload keeps its
// colour across them.
func datapathFigures(s *study.Study, m analysis.Model) ([]figure, []table) {
	var figs []figure
	var tables []table
	across := drawnAcross(s, m.Rows)
	for _, c := range datapathComparisons(s, m) {
		tables = append(tables, c.table())
		// A sweep's variants are a line per datapath in their own figure
		// (sweepsAcrossDatapaths): as bars here they crowded the palette.
		var wls []int
		for i, wl := range c.Workloads {
			if across[wl] != c.Metric {
				wls = append(wls, i)
			}
		}
		// The median over datapaths, not the largest: one datapath's
		// outlier (Flannel's UDP backend losing 60% where the others lose
		// 1%) is the comparison, not a different scale.
		if len(wls) == 0 {
			continue
		}
		levels := make([]float64, len(wls))
		drawn := false
		for j, i := range wls {
			var v []float64
			for _, dp := range c.Datapaths {
				if r, ok := c.row(dp, c.Workloads[i]); ok {
					v = append(v, math.Abs(r.Mean))
				}
			}
			levels[j], drawn = typical(v), drawn || len(v) > 0
		}
		if !drawn {
			// Workloads no trial measured: their table says missing; a
			// figure of nothing but "n/a" slots would say no more.
			continue
		}
		groups := scaleGroups(levels, scaleSplit)
		for _, gj := range groups {
			g := make([]int, len(gj))
			for k, j := range gj {
				g[k] = wls[j]
			}
			title := fmt.Sprintf("%s by datapath", c.Metric)
			if len(groups) > 1 {
				var names []string
				for _, i := range g {
					names = append(names, c.Labels[i])
				}
				if len(names) > 3 {
					// The legend names them; a title listing seven
					// takes four lines of the figure.
					names = []string{fmt.Sprintf("%d workloads", len(names))}
				}
				title += " (" + strings.Join(names, ", ") + ")"
			}
			figs = append(figs, c.figure(title, g))
		}
	}
	return figs, tables
}

// typical is the median of v, 0 when empty: it chooses axes, it is not
// reported.
func typical(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return stat.Quantile(0.5, stat.LinInterp, v, nil)
}

// scaleSplit is how far apart two workloads' typical values may be and
// still share a figure's axis.
const scaleSplit = 5

// scaleGroups splits workloads (their typical values, in order) into
// groups whose values are within ratio of the group's largest,
// keeping each group in the workloads' order; groups come largest first.
// Zeros join the last group.
func scaleGroups(levels []float64, ratio float64) [][]int {
	order := make([]int, len(levels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(levels[b], levels[a]) })
	var groups [][]int
	top := math.Inf(1)
	for _, i := range order {
		// A workload at zero everywhere shows nothing on any axis: it
		// joins the last group rather than a figure of its own.
		if len(groups) == 0 || (levels[i]*ratio < top && levels[i] > 0) {
			groups = append(groups, nil)
			top = levels[i]
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
	}
	for _, g := range groups {
		slices.Sort(g)
	}
	return groups
}

// figure draws the workloads at indices wls of the comparison.
func (c dpComparison) figure(title string, wls []int) figure {
	sc := analysis.Display(c.Metric)
	bars := &groupedBars{Groups: len(c.Datapaths), Fill: 0.8, Missing: missingMark}
	leg := newLegend()
	var missing []string
	for _, i := range wls {
		ser := barSeries{Color: seriesColor(i)}
		for _, dp := range c.Datapaths {
			m, lo, hi := math.NaN(), math.NaN(), math.NaN()
			if r, ok := c.row(dp, c.Workloads[i]); ok {
				m, lo, hi = r.Mean*sc.Factor, r.CI95Low*sc.Factor, r.CI95High*sc.Factor
			} else {
				missing = append(missing, dp+" × "+c.Labels[i])
			}
			ser.Mean, ser.Lo, ser.Hi = append(ser.Mean, m), append(ser.Lo, lo), append(ser.Hi, hi)
		}
		bars.Series = append(bars.Series, ser)
		leg.Add(c.Labels[i], barThumb{ser.Color})
	}
	var drawn []analysis.Row
	for _, i := range wls {
		for _, dp := range c.Datapaths {
			if r, ok := c.row(dp, c.Workloads[i]); ok {
				drawn = append(drawn, r)
			}
		}
	}
	f := figure{Title: title, Caption: fmt.Sprintf(
		"%s per datapath and workload at tuning %s and %d replica%s: %s. "+
			"Datapaths this machine could not build are absent.", analysis.WithUnit(c.Metric, sc.Unit), c.Tuning, c.Replicas, plural(c.Replicas),
		meanNote(drawn, c.Metric))}
	if len(missing) > 0 {
		// Named, not only marked: a reader of a crowded figure should not
		// have to find each "n/a" to know which cells are not there.
		f.Caption += " No value for " + listSome(missing, maxListed) + ": \"n/a\" marks each such slot, not a bar of 0."
	}
	p := newPlot(title, "datapath", analysis.WithUnit(c.Metric, sc.Unit))
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid, bars)
	var ticks []plot.Tick
	for gi, dp := range c.Datapaths {
		ticks = append(ticks, plot.Tick{Value: float64(gi), Label: dp})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = -1
	w := math.Min(1600, math.Max(coreW, float64(120+len(c.Datapaths)*(len(wls)*10+14))))
	f.Wide = w > coreW
	return render(f, p, leg, vg.Length(w), coreH)
}
