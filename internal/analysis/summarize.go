// Package analysis turns a run's raw samples into the summary model
// (Model: one row per cell, metric and core, sweeps, published reference
// matches) and writes it as summary.csv and summary.json. Every number a
// report shows is computed here; internal/report only formats the model.
//
// Every trial of a cell is one independent observation; the summary of a
// cell is the mean with a Student t 95% interval, not below zero nor, for
// a percentage of a whole, above 100 (Describe). Bitrate
// metrics are also normalized to the study's baseline tuning at the same
// datapath, workload and replica count, with Fieller's interval
// (stats.Ratio), which is what the rps-rfs paper plots. Every row also
// carries Welch's p against the baseline tuning's row and against the
// first datapath's (stats.Welch).
package analysis

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// NormalizedMetrics are the metrics normalized to the baseline tuning:
// the rate a tuning's effect is read off, for bulk traffic (bitrate,
// first: a group with several shows it), request/response and HTTP
// workloads. Higher is better for each.
var NormalizedMetrics = []string{results.MetricBitrate, results.MetricBitrateSum, results.MetricTransactions, results.MetricRequests}

// CoreMetrics are the per-core metrics, in report order, taken from
// Sample.Cores.
var CoreMetrics = []string{
	results.MetricCoreIdle, results.MetricCoreSoftIRQ, results.MetricCoreSystem,
	results.MetricCoreUser, results.MetricCoreNetRx, results.MetricCorePoll,
}

// keepCoreRow says whether a per-core metric gets its row: always, but
// core_poll only where measured (a CPU without a polling state has none,
// and an empty row would read as "0 trials").
func keepCoreRow(metric string, xs []float64) bool {
	return len(xs) > 0 || metric != results.MetricCorePoll
}

// ClientCore is a per-core metric of the client node's own cores: the
// client node of a cluster, sampled apart (Sample.ClientCores).
func ClientCore(metric string) string { return results.ClientCorePrefix + metric }

// CoreBase is the per-core metric a ClientCore one is named after, and
// whether metric is such a client one; other metrics come back as they
// are.
func CoreBase(metric string) (string, bool) {
	if m, ok := strings.CutPrefix(metric, results.ClientCorePrefix); ok && slices.Contains(CoreMetrics, m) {
		return m, true
	}
	return metric, false
}

// scalarOrder puts the well-known scalar metrics first; others follow by
// name.
var scalarOrder = map[string]int{results.MetricBitrate: 0, results.MetricBitrateSum: 1, results.MetricRetransmits: 2}

// coreValue extracts a per-core metric from a CoreStat: NaN, no value,
// for a share of a core whose percentages are no measurement (offline at
// the window's end, CoreStat.Measured), whose zeros read as 0% idle. Its
// NET_RX rate is what it ran while online, and stays.
func coreValue(metric string, c results.CoreStat) float64 {
	if metric != results.MetricCoreNetRx && !c.Measured() {
		return math.NaN()
	}
	switch metric {
	case results.MetricCoreIdle:
		return c.Idle
	case results.MetricCoreSoftIRQ:
		return c.SoftIRQ
	case results.MetricCoreSystem:
		return c.System
	case results.MetricCoreUser:
		return c.User
	case results.MetricCoreNetRx:
		return c.NetRxPerSec
	case results.MetricCorePoll:
		if c.Poll != nil {
			return *c.Poll
		}
	}
	return math.NaN()
}

// Unit returns the unit a metric is stored in (summary.csv keeps raw
// units; the Markdown and HTML reports show bitrates in Gbit/s).
func Unit(metric string) string {
	if u, ok := extraUnit(metric); ok {
		return u
	}
	metric, _ = CoreBase(metric)
	switch metric {
	case results.MetricBitrate, results.MetricBitrateSum:
		return "bit/s"
	case results.MetricRetransmits:
		return "count"
	case results.MetricCoreIdle, results.MetricCoreSoftIRQ, results.MetricCoreSystem, results.MetricCoreUser, results.MetricCorePoll:
		return "%"
	case results.MetricCoreNetRx:
		return "softirqs/s"
	}
	// Conventions for metrics other workloads add.
	for _, s := range []struct{ suffix, unit string }{
		{"_bps", "bit/s"}, {"_ms", "ms"}, {"_us", "us"}, {"_percent", "%"}, {"_pct", "%"},
		{"_per_s", "1/s"}, {"_bytes", "B"}, {"_count", "count"},
	} {
		if strings.HasSuffix(metric, s.suffix) {
			return s.unit
		}
	}
	return ""
}

// Key identifies a summary row.
type Key struct {
	results.Cell
	Metric string `json:"metric"`
	CPU    int    `json:"cpu"`
}

// RowKey returns the key of a row.
func RowKey(r Row) Key { return Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU} }

// Index maps rows by key for lookups.
func Index(rows []Row) map[Key]Row {
	m := make(map[Key]Row, len(rows))
	for _, r := range rows {
		m[RowKey(r)] = r
	}
	return m
}

// Summarize returns one row per cell and metric (and per core for core
// metrics), in the study's cell order followed by cells found only in the
// samples. Every cell of a workload gets the same set of metrics and cores,
// the union over that workload's samples, so a cell without samples shows
// up as rows with N = 0 (Mean and the intervals NaN) rather than vanishing;
// a workload of the study without any sample gets its decided metric's
// row, N = 0, in each of its cells (plannedMetrics).
// Non-finite values are treated as missing. s may be nil (no study: no
// normalization, no references, cells from the samples only).
func Summarize(s *study.Study, samples []results.Sample) []Row {
	byCell := map[results.Cell][]results.Sample{}
	for _, smp := range samples {
		byCell[smp.Cell] = append(byCell[smp.Cell], smp)
	}
	scalars, cpus, clientCPUs := metricSets(samples)
	values := map[Key][]float64{}
	var rows []Row
	add := func(k Key, xs []float64) {
		values[k] = xs
		d := Describe(k.Metric, xs)
		r := Row{SummaryRow: results.SummaryRow{
			Cell: k.Cell, Metric: k.Metric, CPU: k.CPU, Unit: Unit(k.Metric),
			N: d.N, Mean: d.Mean, SD: d.SD, CI95Low: d.CI95Low, CI95High: d.CI95High,
		}, CIMethod: CIStudentT, PBaseline: math.NaN(), PFirstDatapath: math.NaN()}
		if d.Degenerate {
			r.CIMethod = CINone
		}
		if k.CPU < 0 && isHeadline(k.Metric) {
			if g, ok := stats.TwoGroups(xs); ok {
				r.Groups = &g
			}
		}
		rows = append(rows, r)
	}
	planned := plannedMetrics(s, scalars)
	for _, c := range cellOrder(s, byCell) {
		cs := byCell[c]
		if m, ok := planned[c.Workload]; ok {
			// No cell of the workload has a sample: its rows would come
			// from none, and it would vanish from every table and from
			// "Cells without samples" as if the study never asked for it.
			add(Key{c, m, -1}, nil)
		}
		for _, m := range sortedMetrics(scalars[c.Workload]) {
			var xs []float64
			for _, smp := range cs {
				if v, ok := smp.Metrics[m]; ok && Finite(v) {
					xs = append(xs, v)
				}
			}
			add(Key{c, m, -1}, xs)
		}
		for _, m := range CoreMetrics {
			for _, cpu := range sortedInts(cpus[c.Workload]) {
				if xs := coreValues(cs, m, cpu, false); keepCoreRow(m, xs) {
					add(Key{c, m, cpu}, xs)
				}
			}
		}
		for _, m := range CoreMetrics {
			for _, cpu := range sortedInts(clientCPUs[c.Workload]) {
				if xs := coreValues(cs, m, cpu, true); keepCoreRow(m, xs) {
					add(Key{c, ClientCore(m), cpu}, xs)
				}
			}
		}
	}
	markWide(rows, values)
	baseline := ""
	if s != nil {
		baseline = s.Spec.Baseline
		markRefs(rows, s.Spec.Reference)
	}
	if baseline != "" {
		normalize(rows, values, baseline)
	}
	pods := roundsWhere(samples, func(m string) bool { return slices.Contains(PodMetrics, m) })
	for i := range rows {
		if rows[i].CPU < 0 {
			rows[i].PodTrials = pods[Key{Cell: rows[i].Cell, Metric: rows[i].Metric, CPU: -1}]
		}
	}
	pValues(rows, values, baseline)
	decided := decidedMetrics(s)
	pairRows(rows, roundsOf(samples, decided), partsOf(samples), SharedRounds(samples), baseline, decided, MarginOf(s))
	return rows
}

// plannedMetrics maps each workload (variant) of the study that no sample
// measured to the metric its cells are decided on (registry.DecidedMetric,
// what stops.json judges them by): the one row each of its cells gets,
// with N = 0, so that summary.csv and summary.json list the cells and the
// reports show them missing. A run whose every trial of the workload
// failed, or that ended before it, has such workloads.
func plannedMetrics(s *study.Study, scalars map[string]map[string]bool) map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	for _, w := range s.Variants() {
		if len(scalars[w.Name]) == 0 {
			out[w.Name] = registry.DecidedMetric(s.Spec.Precision, w)
		}
	}
	return out
}

// isHeadline reports whether metric is one of HeadlineMetrics: the rows
// checked for two groups of trials (a collector's many metrics would
// only add remarks nobody asked for).
func isHeadline(metric string) bool { return slices.Contains(HeadlineMetrics, metric) }

// metricSets returns the scalar metrics, the cores and the client
// node's own cores per workload.
func metricSets(samples []results.Sample) (scalars map[string]map[string]bool, cpus, clientCPUs map[string]map[int]bool) {
	scalars, cpus, clientCPUs = map[string]map[string]bool{}, map[string]map[int]bool{}, map[string]map[int]bool{}
	for _, smp := range samples {
		w := smp.Cell.Workload
		if scalars[w] == nil {
			scalars[w], cpus[w], clientCPUs[w] = map[string]bool{}, map[int]bool{}, map[int]bool{}
		}
		for m := range smp.Metrics {
			scalars[w][m] = true
		}
		for _, c := range smp.Cores {
			if c.CPU >= 0 {
				cpus[w][c.CPU] = true
			}
		}
		for _, c := range smp.ClientCores {
			if c.CPU >= 0 {
				clientCPUs[w][c.CPU] = true
			}
		}
	}
	return scalars, cpus, clientCPUs
}

// coreValues collects a per-core metric of one core over a cell's
// samples, of the client node's own cores when client is set.
func coreValues(cs []results.Sample, metric string, cpu int, client bool) []float64 {
	var xs []float64
	for _, smp := range cs {
		cores := smp.Cores
		if client {
			cores = smp.ClientCores
		}
		for _, cst := range cores {
			if cst.CPU == cpu {
				if v := coreValue(metric, cst); Finite(v) {
					xs = append(xs, v)
				}
				break
			}
		}
	}
	return xs
}

// normalize fills the normalized fields of bitrate rows. The baseline's
// own row is 1 with its relative CI (its mean's noise), since a ratio of
// a sample to itself says nothing.
func normalize(rows []Row, values map[Key][]float64, baseline string) {
	for i := range rows {
		r := &rows[i]
		if !isNormalized(r.Metric) {
			continue
		}
		bk := RowKey(*r)
		bk.Tuning = baseline
		base := values[bk]
		x := values[RowKey(*r)]
		if len(base) == 0 || len(x) == 0 {
			continue
		}
		if r.Tuning == baseline {
			if r.Mean == 0 {
				continue
			}
			r.HasNorm, r.Normalized, r.NormMethod = true, 1, NormOwn
			r.NormCI95Low, r.NormCI95High = r.CI95Low/r.Mean, r.CI95High/r.Mean
			continue
		}
		rc := Versus(x, base).Ratio
		if math.IsNaN(rc.Ratio) {
			continue
		}
		r.HasNorm, r.Normalized, r.NormCI95Low, r.NormCI95High = true, rc.Ratio, rc.Low, rc.High
		r.NormMethod = string(rc.Method)
	}
}

func isNormalized(metric string) bool {
	for _, m := range NormalizedMetrics {
		if m == metric {
			return true
		}
	}
	return false
}

// IsCoreMetric reports whether the metric is per core (of the server
// node, or with ClientCore's prefix of the client node).
func IsCoreMetric(metric string) bool {
	m, _ := CoreBase(metric)
	return slices.Contains(CoreMetrics, m)
}

func cellOrder(s *study.Study, byCell map[results.Cell][]results.Sample) []results.Cell {
	var cells []results.Cell
	inStudy := map[results.Cell]bool{}
	if s != nil {
		for _, c := range s.Cells() {
			if !inStudy[c] {
				inStudy[c] = true
				cells = append(cells, c)
			}
		}
	}
	var extra []results.Cell
	for c := range byCell {
		if !inStudy[c] {
			extra = append(extra, c)
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		a, b := extra[i], extra[j]
		if a.Datapath != b.Datapath {
			return a.Datapath < b.Datapath
		}
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Replicas != b.Replicas {
			return a.Replicas < b.Replicas
		}
		return a.Tuning < b.Tuning
	})
	return append(cells, extra...)
}

func sortedMetrics(set map[string]bool) []string {
	var out []string
	for m := range set {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iok := scalarOrder[out[i]]
		oj, jok := scalarOrder[out[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return out[i] < out[j]
	})
	return out
}

func sortedInts(set map[int]bool) []int {
	var out []int
	for v := range set {
		out = append(out, v)
	}
	sort.Ints(out)
	return out
}

// Finite reports whether v is a number (not NaN, not infinite): what the
// summary and its renderers treat as a value rather than "missing".
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
