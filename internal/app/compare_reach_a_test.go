package app

import (
	"strings"
	"testing"
)

// TestCompareGateCellANotReached: the same the other way round. A, the
// baseline, was cut short after r=1; B ran the whole study and its r=4
// halved. Rows came from A's cells alone, so r=4 was not judged and the
// gate passed (exit 0) while the header said a cell a run has no trial
// of fails a gate; now r=4 fails it as "A did not reach it".
func TestCompareGateCellANotReached(t *testing.T) {
	five := []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9}
	half := []float64{5e9, 5.1e9, 4.9e9, 5.05e9, 4.95e9}
	a := writeReplicas(t, map[int][]float64{1: five}, nil)
	b := writeReplicas(t, map[int][]float64{1: five, 4: half}, nil)
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "| bitrate < -5% | bridge/baseline/tcp/r=4 | **FAIL** | A did not reach it") ||
		!strings.Contains(out, "A did not finish: 1 of its 2 cells were not done") {
		t.Errorf("r=4 absent from A: exit %d, want %d, r=4 failed as not reached\n%s%s", code, ExitFailure, out, errs)
	}
}
