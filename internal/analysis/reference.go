package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// RefMatches reports whether a published reference describes a row. Empty
// reference fields (datapath, tuning, replicas 0, no cpu) match anything:
// "every core > 90% idle" has no cpu and so applies to each core's row.
// A reference's workload names a workload (matching each variant of its
// sweep, NAME@VALUE) or one variant.
func RefMatches(ref study.Reference, row results.SummaryRow) bool {
	return ref.Metric == row.Metric && refAt(ref, row)
}

// refAt: the row is at the reference's point (every field but the
// metric).
func refAt(ref study.Reference, row results.SummaryRow) bool {
	return (ref.Datapath == "" || ref.Datapath == row.Datapath) &&
		refWorkload(ref.Workload, row.Workload) &&
		(ref.Tuning == "" || ref.Tuning == row.Tuning) &&
		refImpairment(ref.Impairment, row.Impairment) &&
		(ref.Replicas == 0 || ref.Replicas == row.Replicas) &&
		(ref.CPU == nil || *ref.CPU == row.CPU)
}

// refWorkload matches a reference's workload: "" matches every cell, a
// workload each variant of its sweep, a variant itself; as spec.only's
// selectors match (study.EntryOf reads a variant's entry).
func refWorkload(ref, cell string) bool {
	return ref == "" || ref == cell || ref == study.EntryOf(cell)
}

// refImpairment matches a reference's impairment: "" matches every cell,
// "none" the unimpaired cells (whose Cell.Impairment is "").
func refImpairment(ref, cell string) bool {
	return ref == "" || ref == cell || (ref == study.NoImpairment && cell == "")
}

// markRefs sets each row's Refs to the indexes of the references that
// match it.
func markRefs(rows []Row, refs []study.Reference) {
	for i := range rows {
		for j, ref := range refs {
			if RefMatches(ref, rows[i].SummaryRow) {
				rows[i].Refs = append(rows[i].Refs, j)
			}
		}
	}
}

// matchReferences returns, per reference in study order, the rows with
// data (N > 0) it matches and the spread of their means and normalized
// values.
func matchReferences(refs []study.Reference, rows []Row, rs rounds, ps parts, shared map[int]bool, margin float64) []RefMatch {
	var out []RefMatch
	for _, ref := range refs {
		nan := math.NaN()
		m := RefMatch{Reference: ref, Label: RefLabel, MeanLow: nan, MeanHigh: nan, NormLow: nan, NormHigh: nan, RatioLow: nan, RatioHigh: nan,
			DiffLow: nan, DiffHigh: nan, DiffCILow: nan, DiffCIHigh: nan}
		for _, r := range rows {
			if r.N == 0 || !RefMatches(ref, r.SummaryRow) {
				continue
			}
			if len(m.Rows) == 0 {
				m.MeanLow, m.MeanHigh = r.Mean, r.Mean
			}
			m.Rows = append(m.Rows, RowKey(r))
			m.MeanLow, m.MeanHigh = min(m.MeanLow, r.Mean), max(m.MeanHigh, r.Mean)
			if ref.Ratio != nil {
				addRatio(&m, r, rows, rs, ps, shared, margin)
			}
			if ref.Difference != nil {
				addDiff(&m, r, rows, rs)
			}
			if !r.HasNorm {
				continue
			}
			if len(m.NormRows) == 0 {
				m.NormLow, m.NormHigh = r.Normalized, r.Normalized
			}
			m.NormRows = append(m.NormRows, RowKey(r))
			m.NormLow, m.NormHigh = min(m.NormLow, r.Normalized), max(m.NormHigh, r.Normalized)
		}
		if len(m.Rows) == 0 {
			m.Missing = missingPart(ref, rows)
		} else if ref.Ratio != nil && len(m.RatioRows) == 0 || ref.Difference != nil && len(m.DiffRows) == 0 {
			den := ref
			den.Datapath, den.Workload = cmp.Or(ref.Against, ref.Datapath), cmp.Or(ref.AgainstWorkload, ref.Workload)
			m.RatioMissing = missingPart(den, rows)
		}
		out = append(out, m)
	}
	return out
}

// missingPart says which part of a reference's point no row with data
// has, by the same rules as RefMatches: "no datapath ovs" (one this
// machine could not build, which the notes name, or one the profile left
// out), "no workload flows-chc", "nothing at 16 replicas"; "" when each
// part has rows on its own.
func missingPart(ref study.Reference, rows []Row) string {
	for _, p := range []struct {
		set  bool
		only study.Reference
		what string
	}{
		{ref.Datapath != "", study.Reference{Datapath: ref.Datapath}, "no datapath " + ref.Datapath},
		{ref.Workload != "", study.Reference{Workload: ref.Workload}, "no workload " + ref.Workload},
		{ref.Tuning != "", study.Reference{Tuning: ref.Tuning}, "no tuning " + ref.Tuning},
		{ref.Replicas != 0, study.Reference{Replicas: ref.Replicas}, fmt.Sprintf("nothing at %d replica(s)", ref.Replicas)},
		{ref.Impairment != "", study.Reference{Impairment: ref.Impairment}, "no impairment " + ref.Impairment},
		{ref.CPU != nil, study.Reference{CPU: ref.CPU}, fmt.Sprintf("no cpu %d here (the paper's per-core numbers are of its machine's cores)", deref(ref.CPU))},
	} {
		if p.set && !slices.ContainsFunc(rows, func(r Row) bool { return r.N > 0 && refAt(p.only, r.SummaryRow) }) {
			return p.what
		}
	}
	return cppUnitMissing(ref, rows)
}

// cppUnitMissing says why a published cost per packet in cycles has no
// row where the run has the same cost in ns: perf could sample only
// cpu-clock on its machine (internal/metrics/cpp), and ns of CPU time are
// not the paper's cycles without the clock rate.
func cppUnitMissing(ref study.Reference, rows []Row) string {
	base, ok := strings.CutSuffix(ref.Metric, "_cycles")
	if !ok || !strings.HasPrefix(base, "cpp_") {
		return ""
	}
	ns := ref
	ns.Metric = base + "_ns"
	if slices.ContainsFunc(rows, func(r Row) bool { return r.N > 0 && RefMatches(ns, r.SummaryRow) }) {
		return "it in ns of CPU time (perf could sample only cpu-clock here), not the paper's hardware cycles"
	}
	return ""
}

// addRatio adds a matched row's ratio of means to the same point of the
// reference's Against datapath, when that row has data. The first such
// row also gets an interval of the ratio from the trials of both: paired
// by round where the two rows ran in the same rounds (another workload
// of the same datapath always does; another datapath where the run's
// datapaths shared rounds, SharedRounds; a round a resume cut is no
// pair, resumed.go), else Fieller's, unpaired,
// decided at the study's margin as the summary's other comparisons are.
func addRatio(m *RefMatch, r Row, rows []Row, rs rounds, ps parts, shared map[int]bool, margin float64) {
	k := m.RatioKey(RowKey(r))
	for _, o := range rows {
		if RowKey(o) != k || o.N == 0 || o.Mean == 0 {
			continue
		}
		q := r.Mean / o.Mean
		if len(m.RatioRows) == 0 {
			m.RatioLow, m.RatioHigh = q, q
			if len(rs[RowKey(r)]) > 0 && len(rs[k]) > 0 {
				_, den := m.Reference.RatioTerms()
				x, ref, dir := rs[RowKey(r)], rs[k], stats.DirectionOf(r.Metric)
				if k.Datapath == r.Datapath || shared[r.Replicas] {
					m.RatioCI = pairApart(den, x, ref, ps.apart(r.Cell, k.Cell), margin, dir)
				} else {
					m.RatioCI = UnpairedOf(den, x, ref, margin, dir)
				}
			}
		}
		m.RatioRows = append(m.RatioRows, RowKey(r))
		m.RatioLow, m.RatioHigh = min(m.RatioLow, q), max(m.RatioHigh, q)
		return
	}
}

// addDiff adds a matched row's difference of means from the same point
// at the reference's Against datapath and/or AgainstWorkload, when that
// row has data. The first such row also gets Welch's 95% interval of the
// difference from the trials of both, unpaired: the two rows need not
// have run in the same rounds, and an unpaired interval is the wider,
// never the falsely narrow one.
func addDiff(m *RefMatch, r Row, rows []Row, rs rounds) {
	k := m.RatioKey(RowKey(r))
	for _, o := range rows {
		if RowKey(o) != k || o.N == 0 {
			continue
		}
		d := r.Mean - o.Mean
		if len(m.DiffRows) == 0 {
			m.DiffLow, m.DiffHigh = d, d
			_, m.DiffCILow, m.DiffCIHigh = stats.DiffAt(trialValues(rs[RowKey(r)]), trialValues(rs[k]), stats.Confidence)
		}
		m.DiffRows = append(m.DiffRows, RowKey(r))
		m.DiffLow, m.DiffHigh = min(m.DiffLow, d), max(m.DiffHigh, d)
		return
	}
}

// trialValues are a row's values in trial order (the sums they are
// summed into come out the same in every run of the report).
func trialValues(byTrial map[int]float64) []float64 {
	out := make([]float64, 0, len(byTrial))
	for _, t := range slices.Sorted(maps.Keys(byTrial)) {
		out = append(out, byTrial[t])
	}
	return out
}

// refMetric accepts the metrics of the ratio and difference references
// among refs: the only ones whose per-trial values matchReferences
// needs.
func refMetric(refs []study.Reference) func(string) bool {
	want := map[string]bool{}
	for _, r := range refs {
		if r.Compares() {
			want[r.Metric] = true
		}
	}
	return func(m string) bool { return want[m] }
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// RatioKey is the key of the row a ratio reference divides the row of k
// by, or a difference subtracts from it: the same point at its Against
// datapath and/or AgainstWorkload. The report names that row's trials
// beside the interval.
func (m RefMatch) RatioKey(k Key) Key {
	if a := m.Reference.Against; a != "" {
		k.Datapath = a
	}
	if a := m.Reference.AgainstWorkload; a != "" {
		k.Workload = a
	}
	return k
}
