package compare

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// missingInA are the rows of B's cells and metrics that A has no counted
// trial of though A's study includes the cell (studyA; nil: only the
// cells A left a trace of are known to be in it): A is the run that
// ended first (a baseline cut by a CI timeout), every trial of the cell
// failed there, or its budget ran out before it. Rows were built from
// A's cells alone, so such a cell was no row and a gate passed on it
// while the page said a cell a run has no trial of fails. Metrics are
// those named or gated, and with every metric wanted those A measured
// somewhere (a metric A never measured is no metric of both runs, unless
// a gate judges it). A cell A has counted trials of without the metric
// is a row too (NotMeasuredA), which the gate fails: it was dropped
// without a word, though B's values there have no baseline as surely
// as where A has no trial of the cell. firstA is where each of A's cells
// comes first in its samples (the rows' order).
func missingInA(a, b *results.Run, p pairing, want wants, studyA []results.Cell, firstA map[key]int) []Row {
	va, vb := values(a.Samples), values(b.Samples)
	as := newRunSide(a, studyA)
	firstB := firstSeen(b.Samples)
	db := disturbedCells(b.Samples)
	wb := wideCells(vb)
	var rows []Row
	for kb, ys := range vb {
		if !want.named[kb.metric] && !(want.every && as.metrics[kb.metric]) {
			continue
		}
		k := p.inA(kb)
		if _, ok := va[k]; ok {
			continue
		}
		why := as.absent(k, want.gated[kb.metric])
		if gateAbsence[why] == "" && why != notMeasured {
			continue
		}
		order := len(a.Samples) + firstB[cellOf(kb)]
		if why == notMeasured {
			// A counted the cell: it comes where A measured it.
			order = firstA[cellOf(k)]
		}
		vs := analysis.Versus(ys, nil)
		rows = append(rows, Row{
			Key: p.name(k), Metric: kb.metric, A: analysis.Describe(kb.metric, nil), B: analysis.Describe(kb.metric, ys),
			Ratio: vs.Ratio, P: vs.P, DataA: k.datapath, DataB: kb.datapath, XB: ys,
			MissingA: gateAbsence[why] != "", AbsentA: gateAbsence[why], GaveUpA: as.gaveUp[cellOf(k)], NotMeasuredA: why == notMeasured,
			WideB: wb[kb], DisturbedB: db[cellOf(kb)], order: order, cellA: cellOf(k), cellB: cellOf(kb),
		})
	}
	return rows
}

// MissingA names the cells of rows A has no trial of (Row.MissingA),
// each once, in the rows' order: the JSON's missing_a.
func MissingA(rows []Row) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, r := range rows {
		if r.MissingA && !seen[r.Key] {
			seen[r.Key] = true
			out = append(out, r.Key)
		}
	}
	return out
}

// aText is A's column of a row: its summary, or why A has none, and
// that A did not finish the cell (the baseline's trials are partial,
// though the gate judges them as they are).
func aText(r Row, summary string) string {
	switch {
	case r.NotMeasuredA && r.UnfinishedA:
		return fmt.Sprintf("not measured in A (its trials of the cell have no value of %s); A unfinished (planned %s)", r.Metric, r.PlannedA)
	case r.NotMeasuredA:
		return "not measured in A (its trials of the cell have no value of " + r.Metric + ")"
	case !r.MissingA && r.UnfinishedA:
		return fmt.Sprintf("%s; A unfinished (n=%d of planned %s)", summary, len(r.XA), r.PlannedA)
	case !r.MissingA:
		return summary
	case r.GaveUpA != "":
		return "missing: A gave the cell up (" + r.GaveUpA + ")"
	case r.AbsentA == gate.NotReached:
		return "missing: A did not reach it (its study has the cell; the run ended first)"
	case r.AbsentA == gate.BudgetOut:
		return "missing: A's budget ran out before this cell"
	}
	return "missing (no value in A: every trial of the cell failed there)"
}
