// Package compare sets two runs side by side: the same study on two
// machines, two engines (local vs kube), or before and after a change.
// Cells are matched by tuning, workload and replica count (and datapath
// when both runs have it), so a local run on `bridge` lines up with a kube
// run on a cluster whose CNI the study called `bridge`.
package compare

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// Row is one matched cell and metric.
type Row struct {
	Key    string // datapath/tuning/workload/replicas
	Metric string
	A, B   stats.Summary
	Ratio  stats.RatioCI // B relative to A
	P      float64       // Welch's two-sided p
	DataA  string        // datapath in A
	DataB  string        // datapath in B
	// XA and XB are the finite values (the gate's intervals are computed
	// from them at its own confidence).
	XA, XB []float64
	// Missing: A has the cell and metric, B's study has the cell but B
	// has no counted trial of it; Absent says why: every trial failed
	// (or B gave the cell up before its first), the run ended before it,
	// or its budget ran out before it.
	Missing bool
	Absent  gate.Absence
	// NotMeasured: B has counted trials of the cell, but none has a
	// value of the metric, which B measured in other cells or a gate
	// judges (gated): the gate fails it.
	NotMeasured bool
	// GaveUp is why B's runner gave the cell up (stops.json's failed, or
	// a trial whose every attempt failed); "" when it did not. A cell B
	// gave up may have trials from before: they are shown, but the gate
	// fails it whatever they say.
	GaveUp string
	// WideA and WideB: in that run the cell's trials spread far more than
	// those of its other cells of the workload, impairment and headline
	// metric (wideCells).
	WideA, WideB bool
	// DisturbedA and DisturbedB count the cell's trials in that run the
	// noise guard found disturbed and counted when its repeats were used
	// up: their spread is in the interval.
	DisturbedA, DisturbedB int
	// MissingA: B has the cell and metric, A's study has the cell but A
	// has no counted trial of it (A ended first, every trial failed, its
	// budget ran out, or it gave the cell up: GaveUpA); AbsentA says why.
	// The gate fails it: B has no baseline to be judged against.
	MissingA bool
	AbsentA  gate.Absence
	GaveUpA  string
	// NotMeasuredA: A has counted trials of the cell, but none has a
	// value of the metric, which B has there and A measured in other
	// cells (or a gate judges it): B's values have no baseline, and the
	// gate fails it.
	NotMeasuredA bool
	// UnfinishedB: B ended before it finished the cell (MarkUnfinished),
	// which was to have PlannedB trials ("5", "3 to 10"): its numbers are
	// partial, and the gate fails it.
	UnfinishedB bool
	PlannedB    string
	// UnfinishedA: A ended before it finished the cell (MarkUnfinishedA),
	// which was to have PlannedA trials. A is the baseline: its partial
	// numbers are judged as they are, but a script reading a row must
	// be able to tell them from a finished cell's without the header.
	UnfinishedA bool
	PlannedA    string
	// order is where the row's cell comes: the index of A's first sample
	// of it, after A's samples for a cell only B has.
	order int
	// cellA and cellB are the row's cell in A and in B.
	cellA, cellB key
}

type key struct {
	datapath, tuning, workload string
	replicas                   int
	metric                     string
	// impairment is the cell's ("" none): impaired cells compare with
	// the same impairment only.
	impairment string
}

// Runs matches the scalar metrics of two runs' counted samples. metrics
// limits the metrics compared (empty, or an entry "": every metric both
// runs have); gated are those a gate judges (--fail-if's), compared
// whatever metrics says. studyA and studyB are the cells of each run's
// study (its study.yaml's Cells; nil when it could not be read). A cell
// of A that B has no value of a metric for is a row too when B's study
// has it and B has no counted trial of it (Missing, with why: every
// trial failed, the run ended or the budget ran out before it), or when
// B's counted trials of it lack a metric B measured elsewhere, or one a
// gate judges (NotMeasured: a B that measured a gated metric in no cell
// has such a row in every cell it counted, which the gate fails, where
// it was bad input that hid another rule's regression); a cell B's study
// leaves out is no row (LeftOutB names them). A cell B gave up (GaveUp)
// is marked whatever trials it left. The other way round, a cell of B
// that A's study has and A has no counted trial of is a row (MissingA,
// missingInA): A is the run cut short, and the gate fails it; so is one
// whose counted trials in A lack the metric (NotMeasuredA); one A's
// study leaves out is no row (LeftOutA names them).
func Runs(a, b *results.Run, metrics, gated []string, studyA, studyB []results.Cell) []Row {
	va, vb := values(a.Samples), values(b.Samples)
	bs := newRunSide(b, studyB)
	p := newPairing(a, b, studyA, studyB)
	wa, wb := wideCells(va), wideCells(vb)
	da, db := disturbedCells(a.Samples), disturbedCells(b.Samples)
	want := wanted(metrics, gated)
	first := firstSeen(a.Samples)
	var rows []Row
	for k, xs := range va {
		if !want.every && !want.named[k.metric] {
			continue
		}
		kb := p.inB(k)
		ys, ok := vb[kb]
		why := present
		if !ok {
			if why = bs.absent(kb, want.gated[k.metric]); why == notRun {
				continue
			}
		}
		// The same comparison the summary makes of a tuning against its
		// baseline: Fieller's ratio and Welch's p of B against A.
		vs := analysis.Versus(ys, xs)
		rows = append(rows, Row{
			Key: p.name(k), Metric: k.metric, A: analysis.Describe(k.metric, xs), B: analysis.Describe(k.metric, ys),
			Ratio: vs.Ratio, P: vs.P, DataA: k.datapath, DataB: kb.datapath,
			XA: xs, XB: ys, Missing: gateAbsence[why] != "", Absent: gateAbsence[why], NotMeasured: why == notMeasured, GaveUp: bs.gaveUp[cellOf(kb)],
			WideA: wa[k], WideB: wb[kb], DisturbedA: da[cellOf(k)], DisturbedB: db[cellOf(kb)], order: first[cellOf(k)],
			cellA: cellOf(k), cellB: cellOf(kb),
		})
	}
	rows = append(rows, missingInA(a, b, p, want, studyA, first)...)
	// Cells in the order run A measured them first (the study's order
	// of datapaths, tunings and replica counts, as its report has them),
	// not by name, which put rfs+ before rfs and r=16 before r=4; the
	// cells only B has after them, in B's order.
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Metric != rows[j].Metric {
			return rows[i].Metric < rows[j].Metric
		}
		if rows[i].order != rows[j].order {
			return rows[i].order < rows[j].order
		}
		return rows[i].Key < rows[j].Key
	})
	return rows
}

// wants are the metrics a comparison compares: every metric (of A, and
// the other way round of both runs), or those named; and those a gate
// judges (gated, named too), which are compared even in a run that
// measured them in no cell.
type wants struct {
	every        bool
	named, gated map[string]bool
}

// wanted reads Runs' metrics and gated: an entry "" in metrics is every
// metric, as is none.
func wanted(metrics, gated []string) wants {
	w := wants{every: len(metrics) == 0, named: map[string]bool{}, gated: map[string]bool{}}
	for _, m := range metrics {
		if m == "" {
			w.every = true
		}
		w.named[m] = true
	}
	for _, m := range gated {
		w.named[m], w.gated[m] = true, true
	}
	return w
}

// pairing matches A's cells to B's. Runs of one datapath each are
// matched whatever their names (local "bridge" vs the CNI a cluster has);
// otherwise datapaths must agree. A run's datapaths are those it tried
// (its failed attempts too) and those its study has (studyA, studyB): a
// run whose every trial failed under another name, or that ended before
// its first, is still the one-datapath run it is, whose cells fail a
// gate; and a run of two datapaths that ended within its first is no run
// of one, matched with the other's whatever its name.
type pairing struct {
	anyDP    bool
	dpA, dpB string
}

func newPairing(a, b *results.Run, studyA, studyB []results.Cell) pairing {
	dpA, dpB := datapaths(a, studyA), datapaths(b, studyB)
	if len(dpA) == 1 && len(dpB) == 1 {
		return pairing{anyDP: true, dpA: dpA[0], dpB: dpB[0]}
	}
	return pairing{}
}

// ShareCell says whether the runs have a cell in common, paired as Runs
// pairs them (runs of one datapath each whatever their names): among the
// cells each has trials of or its study was to run (studyA, studyB).
func ShareCell(a, b *results.Run, studyA, studyB []results.Cell) bool {
	p := newPairing(a, b, studyA, studyB)
	inA := map[key]bool{}
	for _, c := range append(slices.Clone(studyA), cellsOf(a)...) {
		inA[cellKey(c, "")] = true
	}
	return slices.ContainsFunc(append(slices.Clone(studyB), cellsOf(b)...), func(c results.Cell) bool {
		return inA[p.inA(cellKey(c, ""))]
	})
}

// cellsOf are the cells a run has samples of.
func cellsOf(r *results.Run) []results.Cell {
	var out []results.Cell
	for _, s := range r.Samples {
		out = append(out, s.Cell)
	}
	return out
}

// inB is B's key of A's k.
func (p pairing) inB(k key) key {
	if p.anyDP {
		k.datapath = p.dpB
	}
	return k
}

// inA is A's key of B's k.
func (p pairing) inA(k key) key {
	if p.anyDP {
		k.datapath = p.dpA
	}
	return k
}

// name is how a matched cell is shown: datapath/tuning/workload/r=N,
// with both datapaths when they differ, and the impairment if any.
func (p pairing) name(k key) string {
	dp := k.datapath
	if kb := p.inB(k); kb.datapath != dp {
		dp += "|" + kb.datapath
	}
	name := fmt.Sprintf("%s/%s/%s/r=%d", dp, k.tuning, k.workload, k.replicas)
	if k.impairment != "" {
		name += "/" + k.impairment
	}
	return name
}

// cellKey is the key of a cell's metric ("": the cell itself).
func cellKey(c results.Cell, metric string) key {
	return key{c.Datapath, c.Tuning, c.Workload, c.Replicas, metric, c.Impairment}
}

// cellOf is the cell of a metric's key.
func cellOf(k key) key {
	k.metric = ""
	return k
}

// firstSeen is the index of each cell's first sample in samples.
func firstSeen(samples []results.Sample) map[key]int {
	out := map[key]int{}
	for i, s := range samples {
		k := cellKey(s.Cell, "")
		if _, ok := out[k]; !ok {
			out[k] = i
		}
	}
	return out
}

// cellsInOrder are the cells of samples, each once, in the order they
// were first measured (the order rows and notes name them).
func cellsInOrder(samples []results.Sample) []key {
	var out []key
	seen := map[key]bool{}
	for _, s := range samples {
		if k := cellKey(s.Cell, ""); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// disturbedCells counts, per cell, the counted samples the noise guard
// found disturbed.
func disturbedCells(samples []results.Sample) map[key]int {
	out := map[key]int{}
	for _, s := range samples {
		if analysis.CountedDisturbedSample(s) {
			out[cellKey(s.Cell, "")]++
		}
	}
	return out
}

func values(samples []results.Sample) map[key][]float64 {
	out := map[key][]float64{}
	for _, s := range samples {
		for m, v := range s.Metrics {
			if !analysis.Finite(v) {
				continue
			}
			k := cellKey(s.Cell, m)
			out[k] = append(out[k], v)
		}
	}
	return out
}

// Metrics are the metrics any of the samples has, sorted: what --metric
// and --fail-if may name.
func Metrics(samples ...[]results.Sample) []string {
	seen := map[string]bool{}
	for _, list := range samples {
		for _, s := range list {
			for m := range s.Metrics {
				seen[m] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// datapaths are those run r tried and those its study has (study; nil:
// unknown).
func datapaths(r *results.Run, study []results.Cell) []string {
	seen := map[string]bool{}
	for _, c := range study {
		seen[c.Datapath] = true
	}
	for _, s := range r.Samples {
		seen[s.Cell.Datapath] = true
	}
	for _, s := range r.Marked {
		seen[s.Cell.Datapath] = true
	}
	for _, st := range r.Stops {
		seen[st.Cell.Datapath] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
