package compare

import (
	"github.com/cnibench/cnibench/internal/results"
)

// LeftOutB names A's cells that B's study (studyB, its cells; nil:
// unknown, and nothing is named) does not include, in the order A
// measured them, as the rows name cells: they are not compared and a
// gate does not fail them (B was not meant to run them), but a reader
// of a gate that passed should know what it did not look at. A's cells
// are matched with B's as Runs matches them (studyA, studyB).
func LeftOutB(a, b *results.Run, studyA, studyB []results.Cell) []string {
	p := newPairing(a, b, studyA, studyB)
	return leftOut(a, b, studyB, p.inB, p.name)
}

// LeftOutA is LeftOutB the other way round: B's cells that A's study
// (studyA; nil: unknown, nothing named) does not include, in the order
// B measured them. A run of more replica counts than its baseline
// measured cells no row compares, which the reader should be told as
// much as of the cells B's study leaves out. Each is named as a row
// names its cell, by A's key of it.
func LeftOutA(a, b *results.Run, studyA, studyB []results.Cell) []string {
	p := newPairing(a, b, studyA, studyB)
	return leftOut(b, a, studyA, p.inA, func(k key) string { return p.name(p.inA(k)) })
}

// leftOut names run's cells that other's study (otherStudy, with the
// cells other left a trace of; nil: unknown, nothing named) does not
// include: there is other's key of one of run's, name how it is shown.
func leftOut(run, other *results.Run, otherStudy []results.Cell, there func(key) key, name func(key) string) []string {
	if otherStudy == nil {
		return nil
	}
	side := newRunSide(other, otherStudy)
	var out []string
	for _, k := range cellsInOrder(run.Samples) {
		if !side.inStudy[there(k)] {
			out = append(out, name(k))
		}
	}
	return out
}

// Neither names the cells both studies include that neither run has a
// counted trial of (every trial failed in both, both gave the cell up,
// or neither reached it), in A's study's order, as the rows name cells.
// No row can hold them, since neither run has a value to show, and a
// gate does not fail them (no value on either side to judge B by: broken in both, or A ended before it and B broke it), but a gate that
// passed must not leave a cell broken in both runs unsaid. Either study
// unknown (nil): nothing is named.
func Neither(a, b *results.Run, studyA, studyB []results.Cell) []string {
	if studyA == nil || studyB == nil {
		return nil
	}
	p := newPairing(a, b, studyA, studyB)
	sideA, sideB := newRunSide(a, studyA), newRunSide(b, studyB)
	var out []string
	seen := map[key]bool{}
	for _, c := range studyA {
		k := cellKey(c, "")
		kb := p.inB(k)
		if seen[k] || sideA.counted[k] || !sideB.inStudy[kb] || sideB.counted[kb] {
			continue
		}
		seen[k] = true
		out = append(out, p.name(k))
	}
	return out
}
