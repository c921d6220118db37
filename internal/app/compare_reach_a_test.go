package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
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

// TestCompareCellLeftOutByA: A ran replicas [1,4] (--set
// replicas=[1,4]), B its study's [1,4,16], and B's r=16 halved. r=16 is
// no row and fails nothing (A was not meant to run it: no baseline), so
// the gate passes; but the header said nothing of it, and a reader did
// not learn that B measured a cell that was not compared. It names it
// now, on the page, on stderr beside the JSON, and in left_out_a.
func TestCompareCellLeftOutByA(t *testing.T) {
	five := []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9}
	half := []float64{5e9, 5.1e9, 4.9e9, 5.05e9, 4.95e9}
	a := writeReplicas(t, map[int][]float64{1: five, 4: five}, nil)
	b := writeReplicas(t, map[int][]float64{1: five, 4: five, 16: half}, nil)
	wider := strings.Replace(reachStudy, "replicas: [1, 4]", "replicas: [1, 4, 16]", 1)
	if err := os.WriteFile(filepath.Join(b, results.StudyFile), []byte(wider), 0o644); err != nil {
		t.Fatal(err)
	}
	const said = "A's study leaves out 1 of B's cells, which are not compared: bridge/baseline/tcp/r=16"
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != 0 || !strings.Contains(out, said) || strings.Contains(out, "| bridge/baseline/tcp/r=16 |") {
		t.Errorf("exit %d, want 0, r=16 named and no row\n%s%s", code, out, errs)
	}
	code, out, errs = compareExit(t, a, b, "--format", "json", "--fail-if", "bitrate < -5%")
	if code != 0 || !strings.Contains(errs, said) || !strings.Contains(out, `"left_out_a": [
    "bridge/baseline/tcp/r=16"
  ]`) {
		t.Errorf("json: exit %d, want 0, r=16 in left_out_a and on stderr\n%s%s", code, out, errs)
	}
}
