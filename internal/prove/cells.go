package prove

// Reading an A/B's run: B against A per cell, from the adaptive
// controller's stops or the summary's comparisons, and which of B's
// cells were given up or never reached.

import (
	"maps"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// cells reads B against A from the run: from the adaptive controller's
// stops where the run decided B against A (a tuning A/B, or a datapath
// A/B of a study that compares its datapaths, study.ComparesDatapaths:
// the sequential decision, paired by round, at the looks' confidence;
// a fixed design's at 95% on its count), else from the summary's paired
// comparison over all trials at 95% (with the baseline tuning, or with
// the first datapath: the runner interleaves datapaths,
// analysis.SharedRounds), as for a datapath A/B on a study of several
// tunings, which the runner decides against its baseline tuning, or a
// run without stops. Each cell is read once, on the metric it is decided
// on (decidedOf), and carries that metric: a study may mix workloads
// decided on metrics of either direction. B's cells the runner gave up,
// or the budget never reached, are marked so (unmeasured). metric names
// the cells' metric, or where they differ their metrics joined by ", "
// (metricsOf). disturbed counts each cell's trials counted though
// disturbed, given for B's cell and A's (named a).
func cells(s *study.Study, m analysis.Model, stops []results.Stop, a, b string, tunings bool, disturbed map[results.Cell]int) (string, []advise.ProofCell) {
	count := func(c *advise.ProofCell, cell results.Cell) {
		ref := cell
		if tunings {
			ref.Tuning = a
		} else {
			ref.Datapath = a
		}
		c.Disturbed, c.DisturbedA = disturbed[cell], disturbed[ref]
	}
	isB := func(c results.Cell) bool { return tunings && c.Tuning == b || !tunings && c.Datapath == b }
	decided := decidedOf(s, m)
	var out []advise.ProofCell
	var keys []results.Cell // out's cells, for unmeasured to find them
	for _, st := range stops {
		if isB(st.Cell) && st.Decision != "" && versusA(s, st, a, tunings) {
			c := fromStop(st)
			if c.Metric == "" {
				c.Metric = decided(st.Cell)
			}
			count(&c, st.Cell)
			out, keys = append(out, c), append(keys, st.Cell)
		}
	}
	if len(out) == 0 {
		for _, r := range m.Rows {
			if pr := pairOf(r, b, tunings); pr != nil && r.Metric == decided(r.Cell) {
				c := proofCell(r, pr)
				count(&c, r.Cell)
				out, keys = append(out, c), append(keys, r.Cell)
			}
		}
	}
	// A's cells the runner gave up, by B's cell of the same place: a
	// cell given up on both sides is the workload's or the machine's
	// failure, not the candidate's.
	aGaveUp := map[results.Cell]string{}
	for _, st := range stops {
		if st.Failed == "" || st.Status == budgetStatus {
			continue
		}
		switch {
		case tunings && st.Cell.Tuning == a:
			st.Cell.Tuning = b
		case !tunings && st.Cell.Datapath == a:
			st.Cell.Datapath = b
		default:
			continue
		}
		aGaveUp[st.Cell] = st.Failed
	}
	for _, st := range stops {
		if isB(st.Cell) && st.Failed != "" {
			out, keys = unmeasured(out, keys, st, decided, aGaveUp[st.Cell], versusA(s, st, a, tunings))
		}
	}
	return metricsOf(out), apart(out)
}

// versusA: the stop's decision is against A. The runner names what it
// decided each cell against (Stop.Versus): the baseline tuning, or in a
// study of datapaths the first datapath. A datapath A/B on a study of
// several tunings (rps-rfs) has its datapaths decided against nothing:
// its stops' decisions are against the baseline tuning. A run recorded
// before Versus was compared tunings only, with the baseline.
func versusA(s *study.Study, st results.Stop, a string, tunings bool) bool {
	if tunings {
		return st.Versus == a || st.Versus == ""
	}
	return st.Versus == a && (s == nil || s.Compares() == study.ComparesDatapaths)
}

// fromStop is B's cell as its stop decided it against A, at the looks'
// confidence, with the trials that decision rests on (its look's, which
// may be fewer than the trials run), as the run's report gives it.
func fromStop(st results.Stop) advise.ProofCell {
	c := advise.ProofCell{Datapath: st.Cell.Datapath, Impairment: st.Cell.Impairment, Workload: st.Cell.Workload, Replicas: st.Cell.Replicas,
		Metric: st.Metric, N: st.Judged(), Ratio: st.Ratio, Low: st.Low, High: st.High, Method: st.Method, Confidence: st.Confidence,
		Decision: st.Decision, Reason: st.DecisionReason}
	if st.Decision == string(stats.Undecided) {
		c.Stop = st.Reason
	}
	return c
}

// budgetStatus is a stop's status where the budget stopped the cell
// (adaptive.Budget); with Stop.Failed, its block started with the budget
// spent and it ran no trial.
const budgetStatus = string(adaptive.Budget)

// unmeasured marks B's cell of a stop with Failed: not measured where
// the budget never reached its block, else given up (its trials failed
// every attempt), with why, and, where A's same cell was given up too
// (aWhy, its stop's Failed), that apart (GaveUpA). The cell the stop was
// decided against is A's where vsA; where it is not (a datapath A/B on a
// study of tunings: B's own baseline tuning) and was given up, B's
// reason says so. A cell the proof does not have yet (no decision, no
// summary row: no trial counted) is added, with no interval.
func unmeasured(out []advise.ProofCell, keys []results.Cell, st results.Stop, decided func(results.Cell) string, aWhy string, vsA bool) ([]advise.ProofCell, []results.Cell) {
	i := slices.Index(keys, st.Cell)
	if i < 0 {
		metric := st.Metric
		if metric == "" {
			metric = decided(st.Cell)
		}
		out = append(out, advise.ProofCell{Datapath: st.Cell.Datapath, Impairment: st.Cell.Impairment, Workload: st.Cell.Workload,
			Replicas: st.Cell.Replicas, Metric: metric, N: st.N})
		keys, i = append(keys, st.Cell), len(out)-1
	}
	c := &out[i]
	if st.Status == budgetStatus {
		c.NotMeasured = st.Failed
		return out, keys
	}
	c.GaveUp, c.GaveUpA = st.Failed, aWhy
	switch {
	case st.VersusFailed == "":
	case !vsA:
		c.GaveUp += "; " + st.VersusFailed
	case aWhy == "":
		// A's stop not in stops.json, yet the runner says the
		// baseline it decided B against, A's cell, was given up.
		c.GaveUpA = st.VersusFailed
	}
	return out, keys
}

// decidedOf returns the metric each cell of the A/B is decided on, as
// the runner decides it (and analysis compares it): the study's
// precision metric if it names one, else the cell's workload's
// (registry.DecidedMetric). Without the study's workload (no study), the
// first of the normalized metrics the summary has for the cell: iperf3
// writes bitrate and bitrate_sum, and the cell is read once, on bitrate.
func decidedOf(s *study.Study, m analysis.Model) func(results.Cell) string {
	var have map[results.Cell][]string
	return func(c results.Cell) string {
		if s != nil {
			if w, ok := s.Workload(c.Workload); ok {
				return registry.DecidedMetric(s.Spec.Precision, w)
			}
			if p := s.Spec.Precision; p != nil && p.Metric != "" {
				return p.Metric // a cell of a workload the study no longer has
			}
		}
		if have == nil {
			have = map[results.Cell][]string{}
			for _, r := range m.Rows {
				if r.CPU < 0 {
					have[r.Cell] = append(have[r.Cell], r.Metric)
				}
			}
		}
		for _, name := range analysis.NormalizedMetrics {
			if slices.Contains(have[c], name) {
				return name
			}
		}
		return ""
	}
}

// metricsOf names the metric of a proof's cells: the one they share, or
// where they differ each once, joined by ", " in the cells' order.
func metricsOf(cs []advise.ProofCell) string {
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, c.Metric) {
			names = append(names, c.Metric)
		}
	}
	return strings.Join(names, ", ")
}

// mixed: the cells are decided on more than one metric, and each names
// its own where they are shown.
func mixed(cs []advise.ProofCell) bool {
	return slices.ContainsFunc(cs, func(c advise.ProofCell) bool { return c.Metric != cs[0].Metric })
}

// apart keeps a proof's cells' datapath and impairment only where they
// differ between cells (an A/B on a run's own study of several), so the
// built-in A/B's cells read as before: "tcp at 1 pair(s)".
func apart(cs []advise.ProofCell) []advise.ProofCell {
	blankSingle(cs, func(c *advise.ProofCell) *string { return &c.Datapath }, func(c *advise.ProofCell) *string { return &c.Impairment })
	return cs
}

// blankSingle clears each field that has one value across all of xs.
func blankSingle[T any](xs []T, fields ...func(*T) *string) {
	for _, f := range fields {
		seen := map[string]bool{}
		for i := range xs {
			seen[*f(&xs[i])] = true
		}
		if len(seen) < 2 {
			for i := range xs {
				*f(&xs[i]) = ""
			}
		}
	}
}

// pairOf is a summary row's comparison of B against A: with the baseline
// tuning in a tuning A/B, with the first datapath in a datapath one; nil
// for other rows (A's own, per-core ones).
func pairOf(r analysis.Row, b string, tunings bool) *analysis.Pair {
	switch {
	case r.CPU >= 0:
	case tunings && r.Tuning == b:
		return r.VsBaseline
	case !tunings && r.Datapath == b:
		return r.VsFirstDatapath
	}
	return nil
}

// proofCell is a row's comparison over all its trials at 95%.
func proofCell(r analysis.Row, pr *analysis.Pair) advise.ProofCell {
	ci := pr.Chosen
	return advise.ProofCell{Datapath: r.Datapath, Impairment: r.Impairment, Workload: r.Workload, Replicas: r.Replicas, Metric: r.Metric, N: r.N,
		Ratio: fin(ci.Ratio), Low: fin(ci.Low), High: fin(ci.High), Method: string(ci.Method), Confidence: stats.Confidence,
		Decision: string(pr.Decision.Verdict), Reason: pr.Decision.Reason}
}

// also are the A/B's other compared metrics than the verdict's (a
// request/response A/B's latency mean, median and 99th percentile, which
// busy polling is for), by name: what the candidate did to them, over all
// trials at 95%, beside the verdict and not part of it. A cell's own
// decided metric (decidedOf) is in the verdict, not here.
func also(s *study.Study, m analysis.Model, b string, tunings bool) []advise.ProofMetric {
	decided := decidedOf(s, m)
	byMetric := map[string][]advise.ProofCell{}
	for _, r := range m.Rows {
		if pr := pairOf(r, b, tunings); pr != nil && r.Metric != decided(r.Cell) && !isHeadline(r.Metric) {
			byMetric[r.Metric] = append(byMetric[r.Metric], proofCell(r, pr))
		}
	}
	var out []advise.ProofMetric
	for _, name := range slices.Sorted(maps.Keys(byMetric)) {
		out = append(out, advise.ProofMetric{Metric: name, Cells: apart(byMetric[name])})
	}
	return out
}
