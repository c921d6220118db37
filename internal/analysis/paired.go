package analysis

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/ab"
	"github.com/cnibench/cnibench/internal/workload/registry"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

// DefaultMargin is the equivalence margin of decisions when the study
// gives none: a tuning within ±2% of the baseline is "equal".
const DefaultMargin = study.DefaultMargin

// MethodPaired is Model.PairedCI: how the per-round comparisons are made
// (docs/statistics.md, "Paired analysis of interleaved rounds").
const MethodPaired = "paired fieller t 95% of the ratio of means over rounds (trial k of both cells), beside fieller over all trials; the paired one is decided on with the margin whenever valid, fieller otherwise"

// Pair is a row's comparison with a reference row of the same workload,
// replica count, metric and core: the baseline tuning (Row.VsBaseline) or
// the first datapath (Row.VsFirstDatapath). Rounds pair by trial number:
// trial k of both cells ran in the same interleaved round.
type Pair struct {
	// Against is the reference's tuning or datapath name.
	Against string
	// Paired is the paired interval (stats.PairedRatio) over complete
	// rounds.
	Paired stats.PairedCI
	// Unpaired is Fieller's interval of all values (equal to the row's
	// normalized interval for VsBaseline).
	Unpaired stats.RatioCI
	// Chosen is the interval decided on (stats.Choose) and why.
	Chosen stats.Choice
	// Decision is better/worse/equal within Margin/undecided on Chosen.
	Decision stats.Decision
	// Apart are the rounds left out of Paired (and kept in Unpaired)
	// because the row's trial and the reference's ran either side of a
	// resume (resumed.go); nil in a run not resumed.
	Apart []int
}

// lowerMetrics are compared like the rates but with lower better: the
// request/response latencies' mean, median and 99th percentile (the tail
// is what busy polling or RFS are for, and what seed 004 compares across
// CNIs; qperf's mean is named as sockperf's) and the CPU cost per packet.
// Extremes (min, max) and rates of rare events (loss, errors) are left
// out: one outlier or a zero decides their ratio.
var lowerMetrics = []string{
	sockperf.MetricMean, sockperf.MetricP50, sockperf.MetricP99,
	ab.MetricMean, ab.MetricP50, ab.MetricP99,
	cpp.MetricTotal, cpp.MetricTotalCycles,
}

// rounds maps each key to its values by trial number.
type rounds map[Key]map[int]float64

// decidedMetrics are the metrics the study's cells are decided on: the
// one its precision target names, or where it names none each
// workload's (registry.DecidedMetric, as the runner judges its cells).
// They are compared like the paired metrics, each in its own direction
// (stats.DirectionOf), whatever they are: most are rates compared
// anyway, but pod start-up's startup_ms is on no other list, and its
// cells had a decision in the run's output and none in the summary.
func decidedMetrics(s *study.Study) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, w := range s.Spec.Workloads {
		if m := registry.DecidedMetric(s.Spec.Precision, w); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// comparedMetric reports whether a metric's rows get paired comparisons
// and decisions, and in which direction: the normalized metrics, bitrates
// and the request/response rates (higher is better: seed 001's Fig. 3 is
// MACVLAN over the bridge in transactions/s), latencies and the CPU cost per packet
// (lowerMetrics: lower is better), and the study's decided metrics in
// their own direction (stats.DirectionOf).
func comparedMetric(metric string, decided []string) (stats.Direction, bool) {
	switch {
	case isNormalized(metric):
		return stats.HigherIsBetter, true
	case slices.Contains(lowerMetrics, metric):
		return stats.LowerIsBetter, true
	case metric != "" && slices.Contains(decided, metric):
		return stats.DirectionOf(metric), true
	}
	return 0, false
}

// roundsOf collects the per-trial values of the compared metrics.
func roundsOf(samples []results.Sample, decided []string) rounds {
	return roundsWhere(samples, func(m string) bool { _, ok := comparedMetric(m, decided); return ok })
}

// roundsWhere collects the per-trial values of the metrics keep accepts.
func roundsWhere(samples []results.Sample, keep func(string) bool) rounds {
	out := rounds{}
	for _, s := range samples {
		for m, v := range s.Metrics {
			if !keep(m) || !Finite(v) {
				continue
			}
			k := Key{Cell: s.Cell, Metric: m, CPU: -1}
			if out[k] == nil {
				out[k] = map[int]float64{}
			}
			out[k][s.Trial] = v
		}
	}
	return out
}

// aligned returns the values of a and b by trial number over the union
// of both's trials, NaN where one side has no value.
func aligned(a, b map[int]float64) (x, base []float64) {
	for _, t := range unionTrials(a, b) {
		x = append(x, valueOr(a, t))
		base = append(base, valueOr(b, t))
	}
	return x, base
}

// unionTrials are the trial numbers of a and b, sorted.
func unionTrials(a, b map[int]float64) []int {
	set := map[int]bool{}
	for t := range a {
		set[t] = true
	}
	for t := range b {
		set[t] = true
	}
	trials := make([]int, 0, len(set))
	for t := range set {
		trials = append(trials, t)
	}
	sort.Ints(trials)
	return trials
}

func valueOr(m map[int]float64, t int) float64 {
	if v, ok := m[t]; ok {
		return v
	}
	return math.NaN()
}

// PairOf compares a row's per-trial values with a reference's, every
// round a pair (a run not resumed: pairApart).
func PairOf(against string, x, ref map[int]float64, margin float64, dir stats.Direction) *Pair {
	return pairApart(against, x, ref, nil, margin, dir)
}

// pairApart is PairOf with the trials in apart (run either side of a
// resume, parts.apart) left out of the paired interval and kept in the
// unpaired one; the Pair lists them (Apart).
func pairApart(against string, x, ref map[int]float64, apart map[int]bool, margin float64, dir stats.Direction) *Pair {
	xs, bs, split, unpaired := alignedApart(x, ref, apart)
	c := stats.CompareSplitAt(xs, bs, split, margin, dir, stats.Confidence)
	return &Pair{Against: against, Paired: c.Paired, Unpaired: c.Unpaired, Chosen: c.Chosen, Decision: c.Decision, Apart: unpaired}
}

// UnpairedOf compares a row with a reference that did not run in the same
// rounds: datapaths built and measured one after another (runs before
// 2026-11-27, see SharedRounds) share no round, and pairing trial k of
// two of them would claim a drift correction that does not exist. Only
// Fieller's interval is decided on. The values are taken in trial order
// (trialValues), so that their sums, and summary.csv's full-precision
// columns, come out the same in every build of the report.
func UnpairedOf(against string, x, ref map[int]float64, margin float64, dir stats.Direction) *Pair {
	return unpairedOf(against, "not paired: datapaths run one after another, not in the same rounds", x, ref, margin, dir)
}

// unpairedOf is UnpairedOf with why the cells are not paired (the
// paired interval's reason).
func unpairedOf(against, why string, x, ref map[int]float64, margin float64, dir stats.Direction) *Pair {
	u := stats.Ratio(trialValues(x), trialValues(ref))
	// No paired ratio either: NaN, as stats.PairedRatio leaves one it
	// cannot compute, so the summaries write empty and null, not 0 (a
	// datapath that moved nothing).
	nan := math.NaN()
	none := stats.PairedCI{RatioCI: stats.RatioCI{Ratio: nan, Low: nan, High: nan, DF: nan, Method: stats.MethodNone},
		Reason: why}
	ch := stats.Choose(u, none)
	d := stats.Decide(ch.RatioCI, margin, dir)
	if ch.Method == stats.MethodNone {
		// As stats.CompareAt: the choice's reason names both intervals'
		// causes, where Decide's is a bare "no valid interval".
		d.Reason = ch.Reason
	}
	return &Pair{Against: against, Paired: none, Unpaired: u, Chosen: ch, Decision: d}
}

// pairRows fills VsBaseline and VsFirstDatapath of the compared metrics'
// rows that have data on both sides. Datapaths are paired by round at the
// replica counts where they shared rounds (SharedRounds), else compared
// unpaired; a round a resume cut is no pair (ps, resumed.go).
func pairRows(rows []Row, rs rounds, ps parts, shared map[int]bool, baseline string, decided []string, margin float64) {
	first := ""
	if d := DimsOf(rows).Datapaths; len(d) > 1 {
		first = d[0]
	}
	for i := range rows {
		r := &rows[i]
		dir, ok := comparedMetric(r.Metric, decided)
		if !ok || r.CPU >= 0 {
			continue
		}
		k := RowKey(*r)
		if baseline != "" && r.Tuning != baseline {
			b := k
			b.Tuning = baseline
			if len(rs[k]) > 0 && len(rs[b]) > 0 {
				r.VsBaseline = pairApart(baseline, rs[k], rs[b], ps.apart(k.Cell, b.Cell), margin, dir)
			}
		}
		if first != "" && r.Datapath != first {
			f := k
			f.Datapath = first
			switch {
			case len(rs[k]) == 0 || len(rs[f]) == 0:
			case shared[r.Replicas]:
				r.VsFirstDatapath = pairApart(first, rs[k], rs[f], ps.apart(k.Cell, f.Cell), margin, dir)
			default:
				r.VsFirstDatapath = UnpairedOf(first, rs[k], rs[f], margin, dir)
			}
		}
	}
}

// MarginOf is the study's decision margin, DefaultMargin when it gives
// none (or s is nil).
func MarginOf(s *study.Study) float64 {
	if s == nil {
		return study.DefaultMargin
	}
	return s.Spec.DecisionMargin()
}

// pairJSON is Pair as summary.json stores it.
type pairJSON struct {
	Against string `json:"against"`
	PairedN int    `json:"paired_n"`
	// PairedIncomplete counts the rounds left out of the paired interval:
	// a side missing, or cut by a resume (Apart), each once.
	PairedIncomplete int    `json:"paired_incomplete"`
	PairedRatio      jnum   `json:"paired_ratio"`
	PairedLow        jnum   `json:"paired_ci95_low"`
	PairedHigh       jnum   `json:"paired_ci95_high"`
	PairedMethod     string `json:"paired_method"`
	PairedReason     string `json:"paired_reason,omitempty"`
	UnpairedRatio    jnum   `json:"unpaired_ratio"`
	UnpairedLow      jnum   `json:"unpaired_ci95_low"`
	UnpairedHigh     jnum   `json:"unpaired_ci95_high"`
	UnpairedMethod   string `json:"unpaired_method"`
	ChosenRatio      jnum   `json:"chosen_ratio"`
	ChosenLow        jnum   `json:"chosen_low"`
	ChosenHigh       jnum   `json:"chosen_high"`
	ChosenMethod     string `json:"chosen_method"`
	ChosenReason     string `json:"chosen_reason"`
	Decision         string `json:"decision"`
	Significant      bool   `json:"significant"`
	DecisionReason   string `json:"decision_reason"`
	Apart            []int  `json:"apart_rounds,omitempty"`
}

// MarshalJSON writes the pair with nulls for undefined bounds: those of
// an interval that was not estimated (method none) too, which stats
// leaves at the ratio (stats.PairedRatio with fewer than 3 pairs,
// stats.Ratio with one value on a side) and summary.csv leaves empty, so
// that the two files agree and neither reads as a zero-width interval.
func (p Pair) MarshalJSON() ([]byte, error) {
	pl, ph := jsonBounds(p.Paired.RatioCI)
	ul, uh := jsonBounds(p.Unpaired)
	cl, ch := jsonBounds(p.Chosen.RatioCI)
	return json.Marshal(pairJSON{
		Against: p.Against, PairedN: p.Paired.N, PairedIncomplete: p.Paired.Incomplete,
		PairedRatio: jnum(p.Paired.Ratio), PairedLow: pl, PairedHigh: ph,
		PairedMethod: string(p.Paired.Method), PairedReason: p.Paired.Reason,
		UnpairedRatio: jnum(p.Unpaired.Ratio), UnpairedLow: ul, UnpairedHigh: uh,
		UnpairedMethod: string(p.Unpaired.Method),
		ChosenRatio:    jnum(p.Chosen.Ratio), ChosenLow: cl, ChosenHigh: ch,
		ChosenMethod: string(p.Chosen.Method), ChosenReason: p.Chosen.Reason,
		Decision: string(p.Decision.Verdict), Significant: p.Decision.Significant, DecisionReason: p.Decision.Reason,
		Apart: p.Apart,
	})
}

// jsonBounds are an interval's bounds as summary.json writes them: NaN (null)
// where it was not estimated (hasInterval), as summary.csv leaves them
// empty.
func jsonBounds(c stats.RatioCI) (low, high jnum) {
	if !hasInterval(c) {
		return jnum(math.NaN()), jnum(math.NaN())
	}
	return jnum(c.Low), jnum(c.High)
}

// UnmarshalJSON reads what MarshalJSON wrote (the degrees of freedom are
// not stored and read as NaN).
func (p *Pair) UnmarshalJSON(b []byte) error {
	var j pairJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	nan := math.NaN()
	*p = Pair{
		Against: j.Against,
		Paired: stats.PairedCI{RatioCI: stats.RatioCI{Ratio: float64(j.PairedRatio), Low: float64(j.PairedLow), High: float64(j.PairedHigh),
			DF: nan, Method: stats.CIMethod(j.PairedMethod)}, N: j.PairedN, Incomplete: j.PairedIncomplete, Reason: j.PairedReason},
		Unpaired: stats.RatioCI{Ratio: float64(j.UnpairedRatio), Low: float64(j.UnpairedLow), High: float64(j.UnpairedHigh),
			DF: nan, Method: stats.CIMethod(j.UnpairedMethod)},
		Chosen: stats.Choice{RatioCI: stats.RatioCI{Ratio: float64(j.ChosenRatio), Low: float64(j.ChosenLow), High: float64(j.ChosenHigh),
			DF: nan, Method: stats.CIMethod(j.ChosenMethod)}, Reason: j.ChosenReason},
		Decision: stats.Decision{Verdict: stats.Verdict(j.Decision), Significant: j.Significant, Reason: j.DecisionReason},
		Apart:    j.Apart,
	}
	return nil
}

// DecisionText shows a pair's chosen interval, its method, the count it
// was made on and the decision: "1.052 [1.031, 1.074] paired-t, 6 pairs:
// better", "1.050 [1.010, 1.093] fieller, n=6 vs baseline's 5: better";
// an undecided pair also says why. n is the row's trial count and refN
// its reference's (0: unknown). A paired interval is counted in complete
// pairs, which can be fewer than either side's trials, so the row's n
// would overstate what it rests on.
func DecisionText(p *Pair, n, refN int) string {
	return PairText(p, n, refN) + ": " + VerdictText(p)
}

// VerdictText is a pair's decision, with the reason when undecided:
// "better", "undecided (interval covers 1 ...)".
func VerdictText(p *Pair) string {
	if p.Decision.Verdict == stats.Undecided {
		return string(p.Decision.Verdict) + " (" + p.Decision.Reason + ")"
	}
	return string(p.Decision.Verdict)
}

// PairText is the interval a comparison rests on, its method and what it
// counts, without the decision: "0.912 [0.85, 0.97] paired-t, 6 pairs".
func PairText(p *Pair, n, refN int) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	iv := "no interval"
	if hasInterval(p.Chosen.RatioCI) {
		iv = fmt.Sprintf("%s [%s, %s] %s", f(p.Chosen.Ratio), f(p.Chosen.Low), f(p.Chosen.High), p.Chosen.Method)
	}
	return iv + ", " + PairCount(p, n, refN)
}

// PairCount is what a comparison's chosen interval rests on: "6 pairs"
// (complete rounds) for a paired one, "n=3 vs host's 10" for Fieller's
// or none; refN 0 (unknown) leaves the reference's count out.
func PairCount(p *Pair, n, refN int) string {
	switch {
	case p.Chosen.Method == stats.MethodPairedT || p.Chosen.Method == stats.MethodPairedBootstrap:
		return fmt.Sprintf("%d pairs", p.Paired.N)
	case refN > 0:
		return fmt.Sprintf("n=%d vs %s's %d", n, p.Against, refN)
	}
	return fmt.Sprintf("n=%d", n)
}

// SharedRounds reports, per replica count, whether the run's datapaths
// ran in shared rounds: every trial k (of any datapath, tuning and
// workload) started before every trial k+1, so that trial k of two
// datapaths is a pair as trial k of two tunings is. The runner
// interleaves datapaths so (runner/interleave.go); a run that measured
// them one after another, or whose samples lack start times, fails the
// check and its datapaths are compared unpaired. It is checked on the
// samples rather than assumed, so a run directory from before the change
// is still read right.
func SharedRounds(samples []results.Sample) map[int]bool {
	type span struct{ first, last time.Time }
	byReps := map[int]map[int]*span{}
	dps := map[int]map[string]bool{}
	untimed := map[int]bool{}
	for _, s := range samples {
		reps := s.Cell.Replicas
		if s.Start.IsZero() {
			untimed[reps] = true
		}
		if byReps[reps] == nil {
			byReps[reps], dps[reps] = map[int]*span{}, map[string]bool{}
		}
		dps[reps][s.Cell.Datapath] = true
		sp := byReps[reps][s.Trial]
		if sp == nil {
			byReps[reps][s.Trial] = &span{s.Start, s.Start}
			continue
		}
		if s.Start.Before(sp.first) {
			sp.first = s.Start
		}
		if s.Start.After(sp.last) {
			sp.last = s.Start
		}
	}
	out := map[int]bool{}
	for reps, spans := range byReps {
		if untimed[reps] || len(dps[reps]) < 2 {
			continue
		}
		trials := slices.Sorted(maps.Keys(spans))
		ok := true
		for i := 1; i < len(trials); i++ {
			ok = ok && spans[trials[i-1]].last.Before(spans[trials[i]].first)
		}
		out[reps] = ok
	}
	return out
}
