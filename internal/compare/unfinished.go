package compare

import (
	"github.com/cnibench/cnibench/internal/results"
)

// LeftOut names A's cells that B's study (studyB, its cells; nil:
// unknown, and nothing is named) does not include, in the order A
// measured them, as the rows name cells: they are not compared and a
// gate does not fail them (B was not meant to run them), but a reader
// of a gate that passed should know what it did not look at. A's cells
// are matched with B's as Runs matches them (studyA, studyB).
func LeftOut(a, b *results.Run, studyA, studyB []results.Cell) []string {
	if studyB == nil {
		return nil
	}
	bs := newRunSide(b, studyB)
	p := newPairing(a, b, studyA, studyB)
	var out []string
	for _, k := range cellsInOrder(a.Samples) {
		if !bs.inStudy[p.inB(k)] {
			out = append(out, p.name(k))
		}
	}
	return out
}
