package compare

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/cnibench/cnibench/internal/gate"
	"github.com/cnibench/cnibench/internal/results"
)

// TestCSVSaysWhichKindOfChange: a row judged by an absolute and a
// relative rule gives the first rule's numbers, so the CSV says which
// (gate_absolute): gate_change is B − A in the metric's unit after an
// absolute rule, a fraction after a relative one, and a script could not
// tell 0.5 from 11621.3 otherwise. The absolute rule's interval of B − A
// is in gate_diff_low and gate_diff_high.
func TestCSVSaysWhichKindOfChange(t *testing.T) {
	var a, b []results.Sample
	for i, v := range []float64{100, 110, 90, 105, 95} {
		a = append(a, sample("bridge", "baseline", 1, v))
		b = append(b, sample("bridge", "baseline", 1, 2*v+float64(i)))
	}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	abs, err := gate.Parse("bitrate > +50")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := gate.Parse("bitrate > +10%")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rules    []gate.Rule
		absolute string
		diff     bool
	}{
		{[]gate.Rule{abs, rel}, "true", true},
		{[]gate.Rule{rel, abs}, "false", false},
	} {
		vs, err := gate.Check(c.rules, Cells(rows))
		if err != nil {
			t.Fatal(err)
		}
		var cs bytes.Buffer
		if err := Write(&cs, "csv", Head{}, rows, vs); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&cs).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("csv %v:\n%s", err, cs.String())
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[h] = i
		}
		r := recs[1]
		if r[col["gate_absolute"]] != c.absolute {
			t.Errorf("%s first: gate_absolute %q, want %s", c.rules[0].Text, r[col["gate_absolute"]], c.absolute)
		}
		low, err := strconv.ParseFloat(r[col["gate_diff_low"]], 64)
		if c.diff && (err != nil || low <= 0) || !c.diff && r[col["gate_diff_low"]] != "" {
			t.Errorf("%s first: gate_diff_low %q", c.rules[0].Text, r[col["gate_diff_low"]])
		}
	}
}
