package runner

import (
	"bytes"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// A study without tunings to compare (a datapath study) stops each cell
// on the precision of its own mean: on the target between min and max
// when the target is reachable, at max when it is not. The fake trials
// spread ±10% around 100, so the 95% half-width falls from about 20% at
// 3 trials to about 5% at 10. A fixed count with a target runs its
// count and records the stop all the same.
func TestPrecisionOfMeanStopsCells(t *testing.T) {
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	for _, tc := range []struct {
		target string
		status string
		trials string
		lo, hi int // bounds on the trials the cell runs
	}{
		{"6%", "target", "{min: 3, max: 12}", 4, 11},
		{"0.5%", "max", "{min: 3, max: 12}", 12, 12},
		// A fixed count runs exactly its trials, and the stop says
		// whether they met the target (a study's paper profile).
		{"30%", "target", "5", 5, 5},
		{"0.5%", "max", "5", 5, 5},
	} {
		s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{
			"tunings=[baseline]", "replicas=[1]", "budget=0s",
			"trials=" + tc.trials, "precision={halfWidth: " + tc.target + ", of: mean}",
		}}, cat)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		r := newRoundsRun(t, s, t.TempDir(), &log)
		f := &fakeTrials{r: r}
		if err := runBlocks(r, f); err != nil {
			t.Fatal(err)
		}
		if len(r.stops) != 1 {
			t.Fatalf("%s: stops %+v", tc.target, r.stops)
		}
		st := r.stops[0]
		if st.Status != tc.status || st.N < tc.lo || st.N > tc.hi || len(f.ran) != st.N || st.Of != "mean" || st.HalfWidth == nil {
			t.Fatalf("target %s: %+v after %d trials; want %s after %d to %d", tc.target, st, len(f.ran), tc.status, tc.lo, tc.hi)
		}
		if hw := *st.HalfWidth; (tc.status == "target") != (hw <= st.Target) {
			t.Errorf("target %s: stopped %s at half-width %.4f", tc.target, st.Status, hw)
		}
	}
}
