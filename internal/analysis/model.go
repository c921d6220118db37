package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// ModelVersion is the version of the summary model as summary.json
// stores it. Bump it when a field changes meaning or goes away; adding a
// field keeps the version. Version 2 (2026-12-07): a row not per core has
// "cpu": null where version 1 wrote -1, which a reader of version 1 would
// take for core 0 or a core index.
const ModelVersion = 2

// SummaryJSON is the file name of the model in a run directory. It is
// derived (rebuilt by `cnibench report DIR`), like summary.csv.
const SummaryJSON = "summary.json"

// Method names of the model's statistics, as summary.json records them
// (docs/statistics.md has the formulas).
const (
	MethodMeanCI = "student-t 95%, lower bound raised to 0 when no observation is negative, upper bound of a percent share lowered to 100 when none exceeds it"
	MethodRatio  = "fieller 95% (delta method when unbounded), welch-satterthwaite df"
	MethodP      = "welch two-sided t test, not corrected for multiple comparisons"
)

// Per-row interval methods (Row.CIMethod).
const (
	CIStudentT = "student-t"
	CINone     = "none" // fewer than two observations
)

// NormOwn is Row.NormMethod of the baseline's own row: its interval is
// its own mean's interval divided by its mean, not a ratio interval.
const NormOwn = "baseline-own"

// Model is every number a run's summary shows: what summary.csv,
// summary.json, summary.md and report.html are rendered from. Renderers
// format it; they never compute a statistic.
type Model struct {
	Version int    `json:"version"`
	Study   string `json:"study"`
	// Origin is how the run was started (env.json's), which the
	// report's rerun commands are built from; nil when not recorded.
	Origin *results.Origin `json:"origin,omitempty"`
	// MachineS is env.json's machine_s: the machine time the run spent,
	// as its budget counted it (0: not recorded).
	MachineS float64 `json:"machine_s,omitempty"`
	// Baseline is the tuning ratios and PBaseline are against; "" when
	// the study names none.
	Baseline string `json:"baseline,omitempty"`
	// FirstDatapath is the datapath PFirstDatapath is against; "" when
	// the run has one datapath.
	FirstDatapath string `json:"first_datapath,omitempty"`
	// TrialsPlanned is the most trials a cell was planned with; an
	// adaptive run (TrialsMin < TrialsPlanned) stops cells earlier.
	TrialsPlanned int    `json:"trials_planned"`
	TrialsMin     int    `json:"trials_min,omitempty"`
	MeanCI        string `json:"mean_ci_method"`
	RatioCI       string `json:"ratio_ci_method"`
	PTest         string `json:"p_method"`
	// PairedCI is MethodPaired; Margin the decisions' equivalence margin
	// (0.02 for ±2%).
	PairedCI string  `json:"paired_method,omitempty"`
	Margin   float64 `json:"margin,omitempty"`
	// Rows: one per cell, metric and core, in the study's cell order.
	Rows       []Row          `json:"rows"`
	Sweeps     []SweepSummary `json:"sweeps,omitempty"`
	References []RefMatch     `json:"references,omitempty"`
	// Bounds are saturated UDP cells on a shaped link beside their
	// Ethernet bound (bound.go); Verdicts the verdict table (verdict.go).
	Bounds   []Bound   `json:"bounds,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// OneCore are the cells bound by one core of a node (onecore.go).
	OneCore []OneCore `json:"one_core,omitempty"`
	// VerdictCriteria describes spec.verdict's criteria.
	VerdictCriteria string `json:"verdict_criteria,omitempty"`
	// Stops are the controller's word per cell (adaptive runs, and fixed
	// ones with a precision target or a budget);
	// Marked the failed, repeated and disturbed attempts (marked.go).
	Stops  []results.Stop `json:"stops,omitempty"`
	Marked []Marked       `json:"marked,omitempty"`
	// Unfinished are the cells the run ended before finishing
	// (Unfinished): --resume continues them.
	Unfinished []results.Cell `json:"unfinished,omitempty"`
	// Skipped are the study's datapaths this machine could not build
	// (spec.skipUnavailable), with why: they are in no row.
	Skipped []results.Skipped `json:"skipped,omitempty"`
	// Tunings are the study's tunings: what each is and what it set.
	Tunings []TuningDef `json:"tunings,omitempty"`
}

// Row is one cell, metric and core: the summary.csv columns plus the
// p values, the interval methods and the published numbers that match.
type Row struct {
	results.SummaryRow
	// CIMethod is CIStudentT or CINone (N < 2).
	CIMethod string
	// NormMethod is how the normalized interval was obtained: a
	// stats.CIMethod ("fieller", "delta", "none") or NormOwn; "" when
	// the row is not normalized.
	NormMethod string
	// PBaseline is Welch's two-sided p of this row's observations against
	// the baseline tuning's at the same datapath, workload, replica
	// count, metric and core; NaN for the baseline itself or when either
	// side has fewer than two observations.
	PBaseline float64
	// PFirstDatapath is the same against Model.FirstDatapath at the same
	// tuning, workload, replica count, metric and core.
	PFirstDatapath float64
	// Refs indexes the Model.References that match the row.
	Refs []int
	// VsBaseline and VsFirstDatapath are the paired comparisons and
	// decisions (paired.go) of metrics with a known good direction; nil
	// otherwise, and for the reference rows themselves.
	VsBaseline      *Pair
	VsFirstDatapath *Pair
	// Groups is set on a headline metric's row whose trials fall in two
	// separated groups (stats.TwoGroups): its interval assumes one value,
	// and the report shows the two.
	Groups *stats.Groups
	// Wide is set on a headline metric's row whose trials spread far
	// more than its neighbours' (markWide), when Groups is not.
	Wide *WideSpread
	// PodTrials are a PodMetrics row's values by trial (SamePods); nil
	// for other rows.
	PodTrials map[int]float64 `json:"-"`
}

// PodMetrics describe the pods a cell ran on, not its traffic: every
// cell at one datapath and replica count runs on the pods scaled for
// them, and a workload placed on the same pods as another records the
// same set-up.
var PodMetrics = []string{"pod_setup_ms"}

// SamePods reports whether two rows of a pod metric (of two workloads,
// or two tunings, at one datapath and replica count) are one measurement: they
// have trials in common and agree on each. Their means may still
// differ: in a run of several datapaths each round builds new pods, and
// a cell that stopped earlier holds fewer of the rounds' values.
func SamePods(a, b Row) bool {
	common := 0
	for k, v := range a.PodTrials {
		if w, ok := b.PodTrials[k]; ok {
			if v != w {
				return false
			}
			common++
		}
	}
	return common > 0
}

// RefMatch is a study's published number and the rows of this run it
// describes. The published values are the paper's, not ours.
type RefMatch struct {
	Reference study.Reference `json:"reference"`
	// Label names the source of the published number in tables ("paper").
	Label string `json:"label"`
	// Rows are the matched rows with data; NormRows those of them with a
	// normalized value.
	Rows     []Key `json:"rows"`
	NormRows []Key `json:"norm_rows"`
	// MeanLow and MeanHigh span the means of Rows; NormLow and NormHigh
	// the normalized values of NormRows (NaN, null in JSON, when empty).
	MeanLow  float64 `json:"mean_low"`
	MeanHigh float64 `json:"mean_high"`
	NormLow  float64 `json:"norm_low"`
	NormHigh float64 `json:"norm_high"`
	// RatioRows are the matched rows with a row to divide by (at
	// Reference.Against and/or AgainstWorkload); RatioLow and RatioHigh
	// span those ratios of means.
	RatioRows []Key   `json:"ratio_rows,omitempty"`
	RatioLow  float64 `json:"ratio_low"`
	RatioHigh float64 `json:"ratio_high"`
	// RatioCI is the interval of the first ratio row, its Chosen paired
	// by round where both rows ran in the same rounds, else Fieller's
	// (nil when a side has no trials).
	RatioCI *Pair `json:"ratio_ci,omitempty"`
	// DiffRows are the matched rows with a row to subtract (at the same
	// other point a ratio divides by); DiffLow and DiffHigh span those
	// differences of means, and DiffCILow and DiffCIHigh are Welch's 95%
	// interval of the first one's (NaN when a side has fewer than two
	// trials).
	DiffRows   []Key   `json:"diff_rows,omitempty"`
	DiffLow    float64 `json:"diff_low"`
	DiffHigh   float64 `json:"diff_high"`
	DiffCILow  float64 `json:"diff_ci_low"`
	DiffCIHigh float64 `json:"diff_ci_high"`
	// Missing says, when no row matched, which part of the point the run
	// has no data for ("no datapath ovs"); RatioMissing the same for the
	// point a ratio divides by or a difference subtracts. Empty when it
	// cannot tell.
	Missing      string `json:"missing,omitempty"`
	RatioMissing string `json:"ratio_missing,omitempty"`
	// Method says how our numbers for the point were measured otherwise
	// than the published one, where a reader setting them side by side
	// must know it (PktgenJitter; a total over our window, with its
	// length and rate per second); empty when they were measured alike.
	Method string `json:"method,omitempty"`
}

// RefLabel is how tables name a published number.
const RefLabel = "paper"

// Build computes the model of a run: s may be nil (no study: no
// normalization, no sweeps, no references).
func Build(s *study.Study, samples []results.Sample) Model {
	m := Model{
		Version: ModelVersion, Study: "run",
		MeanCI: MethodMeanCI, RatioCI: MethodRatio, PTest: MethodP,
		PairedCI: MethodPaired, Margin: MarginOf(s),
	}
	if s != nil {
		m.Study, m.Baseline, m.TrialsPlanned, m.TrialsMin = s.Metadata.Name, s.Spec.Baseline, s.Spec.Trials.Max, s.Spec.Trials.Min
	}
	m.Rows = Summarize(s, samples)
	if d := DimsOf(m.Rows).Datapaths; len(d) > 1 {
		m.FirstDatapath = d[0]
	}
	for _, sw := range Sweeps(s, m.Rows) {
		if len(sw.Variants) > 1 {
			m.Sweeps = append(m.Sweeps, SweepSummaryOf(s, sw, m.Rows))
		}
	}
	if s != nil {
		m.References = matchReferences(s.Spec.Reference, m.Rows, roundsWhere(samples, refMetric(s.Spec.Reference)), partsOf(samples), SharedRounds(samples), MarginOf(s))
		// Without the run's env.json here, the rows tell whether the nodes
		// shared a kernel; AddRun marks again with what the run recorded.
		m.markMethods(s, nil)
		m.Bounds = bounds(s, m.Rows)
		m.Verdicts = verdicts(s, m.Rows)
		if s.Spec.Verdict != nil {
			m.VerdictCriteria = s.Spec.Verdict.String()
		}
	}
	return m
}

// Trials is the run's design as the model records it: trials {min,
// max}, a fixed count where they are equal; zero where the model was
// built without a study.
func (m Model) Trials() study.Trials {
	return study.Trials{Min: m.TrialsMin, Max: m.TrialsPlanned}
}

// Index maps the model's rows by key.
func (m Model) Index() map[Key]Row { return Index(m.Rows) }
