package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// A cell whose trials spread widely in one run is marked on its rows, in
// that run only, and the table says what the mark means; the JSON and
// CSV carry it too.
func TestWideCellMarked(t *testing.T) {
	// Five cells of one workload, 5 trials each, ±1% around 10 Gbit/s;
	// in B, rfs at 1 pair scatters ±30%.
	tight := []float64{0.99, 1.01, 1.0, 0.995, 1.005}
	wild := []float64{0.7, 1.3, 1.0, 0.75, 1.25}
	var a, b []results.Sample
	for _, tu := range []string{"baseline", "rps", "rfs"} {
		for _, reps := range []int{1, 4} {
			for i := range tight {
				a = append(a, sample("bridge", tu, reps, 10e9*tight[i]))
				x := tight[(i+reps)%len(tight)]
				if tu == "rfs" && reps == 1 {
					x = wild[i]
				}
				b = append(b, sample("bridge", tu, reps, 10e9*x))
			}
		}
	}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	marked := 0
	for _, r := range rows {
		if r.WideA {
			t.Errorf("%s: marked wide in A", r.Key)
		}
		if r.WideB {
			marked++
			if r.Key != "bridge/rfs/tcp/r=1" {
				t.Errorf("%s: marked wide in B", r.Key)
			}
		}
	}
	if marked != 1 {
		t.Fatalf("%d rows marked wide in B, want rfs at 1 pair: %+v", marked, rows)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 5, 5 (B spreads widely) |", "\"spreads widely\": in that run the cell's trials spread far more"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js, csv bytes.Buffer
	if err := Write(&js, "json", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			Cell  string `json:"cell"`
			WideB bool   `json:"wide_b"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range doc.Rows {
		if r.WideB {
			n++
		}
	}
	if n != 1 {
		t.Errorf("JSON marks %d rows wide_b, want 1:\n%s", n, js.String())
	}
	if err := Write(&csv, "csv", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(csv.String(), "\n"); !strings.Contains(head, ",wide_a,wide_b,") || strings.Count(csv.String(), ",false,true,0,0,") != 1 {
		t.Errorf("CSV lacks the wide columns or the mark:\n%s", csv.String())
	}
}

// A cell's trials counted though disturbed in either run are counted in
// its row, named beside n, explained under the table, and carried in the
// CSV and JSON.
func TestDisturbedTrialsCounted(t *testing.T) {
	noisy := func(s results.Sample) results.Sample {
		s.Noise = &results.Noise{StealPct: 24, Disturbed: "steal 24.0% > 10%"}
		return s
	}
	a := []results.Sample{sample("bridge", "baseline", 1, 10e9), noisy(sample("bridge", "baseline", 1, 12e9)), sample("bridge", "rps", 1, 10e9), sample("bridge", "rps", 1, 11e9)}
	b := []results.Sample{noisy(sample("bridge", "baseline", 1, 11e9)), noisy(sample("bridge", "baseline", 1, 7e9)), sample("bridge", "rps", 1, 10e9), sample("bridge", "rps", 1, 11e9)}
	rows := Runs(counted(a), counted(b), []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 2 || rows[0].DisturbedA != 1 || rows[0].DisturbedB != 2 || rows[1].DisturbedA+rows[1].DisturbedB != 0 {
		t.Fatalf("rows %+v", rows)
	}
	var md, csv, js bytes.Buffer
	if err := WriteMarkdown(&md, Head{}, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| 2, 2 (disturbed: 1 of A's, 2 of B's) |") || !strings.Contains(md.String(), `"disturbed": trials of the cell`) {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := Write(&csv, "csv", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(csv.String(), "\n"); !strings.Contains(head, ",disturbed_a,disturbed_b,") || !strings.Contains(csv.String(), ",1,2,false,,,,,,,,,false,,,false,,,,false,false,,\n") {
		t.Errorf("csv:\n%s", csv.String())
	}
	if err := Write(&js, "json", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"disturbed_a": 1`) || !strings.Contains(js.String(), `"disturbed_b": 2`) {
		t.Errorf("json:\n%s", js.String())
	}
	// A quiet pair of runs says nothing of it.
	md.Reset()
	if err := WriteMarkdown(&md, Head{}, rows[1:]); err != nil || strings.Contains(md.String(), "disturbed") {
		t.Errorf("quiet runs: %v\n%s", err, md.String())
	}
}
