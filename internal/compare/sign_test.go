package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// TestRatioOfNegativeMeansMarked: B/A of a row whose A mean is below 0
// (a lost count iperf3 lowered below 0) is no ratio to read, 1.2 being a
// fall; the table marks it and says so, and csv and json say it among
// their warnings.
func TestRatioOfNegativeMeansMarked(t *testing.T) {
	lost := func(v float64) results.Sample {
		s := sample("bridge", "baseline", 1, 1e9+v)
		s.Metrics["lost_count"] = v
		return s
	}
	a := []results.Sample{lost(-100), lost(-101), lost(-99)}
	b := []results.Sample{lost(-120), lost(-121), lost(-119)}
	rows := Runs(counted(a), counted(b), []string{"lost_count", results.MetricBitrate}, nil, nil, nil)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Head{A: "a", B: "b"}, rows); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Count(out, " A<0 |") != 1 || !strings.Contains(out, "\"A<0\": B/A cannot be read as a ratio where A's mean is below 0") {
		t.Errorf("want the lost_count row marked A<0 and the note:\n%s", out)
	}
	w := strings.Join(Warnings(Head{}, rows), "\n")
	if !strings.Contains(w, "B/A cannot be read as a ratio where A's mean is below 0") || !strings.Contains(w, "r=1 lost_count") ||
		strings.Contains(w, "bitrate") {
		t.Errorf("warnings do not name the row whose A is below 0 (only it):\n%s", w)
	}
}
