package adaptive

import (
	"math"
	"testing"

	"github.com/cnibench/cnibench/internal/stats"
)

// A round whose trial of a cell and of its baseline ran in different
// parts of the run (either side of a kill and --resume) is no pair: it
// is left out of the paired statistic, of the looks' too, and kept in
// the unpaired one. A run not resumed pairs every round, as before.
func TestSplitRoundIsNoPair(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.05}
	base := []float64{100, 104, 98, 101, 99, 103}
	tuned := []float64{110, 115, 107, 111, 108, 114}
	// resumeAt is the first round of each cell the resumed run measured
	// (0: not resumed).
	plan := func(resumeAt map[string]int) CellPlan {
		part := func(id string, round int) int {
			if r := resumeAt[id]; r > 0 && round >= r {
				return 1
			}
			return 0
		}
		var b, c Cell
		b.ID, c.ID, c.Baseline = "b", "t", "b"
		for k := range base {
			round := k + 1
			b.Obs = append(b.Obs, Obs{Round: round, Value: base[k], Part: part("b", round)})
			c.Obs = append(c.Obs, Obs{Round: round, Value: tuned[k], Part: part("t", round)})
		}
		p, err := Next(cfg, []Cell{b, c}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return p.Cells[1]
	}
	whole := plan(nil)
	// Killed in round 4 after the baseline's trial, before the tuning's.
	split := plan(map[string]int{"b": 5, "t": 4})
	if r := plan(map[string]int{"b": 4, "t": 4}); r.Comparison.Paired.N != 6 {
		t.Errorf("resumed between rounds: %d pairs, want 6", r.Comparison.Paired.N)
	}
	if whole.Comparison.Paired.N != 6 || whole.Look != 5 || whole.Sequential.Paired.N != 5 {
		t.Fatalf("not resumed: %d pairs, look at %d on %d pairs; want 6, 5 and 5", whole.Comparison.Paired.N, whole.Look, whole.Sequential.Paired.N)
	}
	if split.Comparison.Paired.N != 5 || split.Sequential.Paired.N != 4 {
		t.Errorf("round 4 split: %d pairs, the look's %d; want 5 and 4", split.Comparison.Paired.N, split.Sequential.Paired.N)
	}
	all := stats.Ratio(tuned, base)
	if u := split.Comparison.Unpaired; math.Abs(u.Ratio-all.Ratio) > 1e-12 || math.Abs(u.Low-all.Low) > 1e-12 || math.Abs(u.High-all.High) > 1e-12 {
		t.Errorf("round 4 split: unpaired %+v, want Fieller's over every trial %+v", u, all)
	}
}
