package adaptive

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/stats"
)

// obsOf numbers values as rounds 1, 2, ...
func obsOf(vs ...float64) []Obs {
	out := make([]Obs, len(vs))
	for k, v := range vs {
		out[k] = Obs{Round: k + 1, Value: v}
	}
	return out
}

// TestClosingLookFixed: a fixed design of 5 trials whose budget runs
// out after 3 is judged at 3, at 95% (its one look), where its trials
// say worse; before, it said "no decision before 5 trials" however
// clear they were (and the report showed that in place of its plain
// comparison). Without an interval (one trial) it still says so.
func TestClosingLookFixed(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 5, Max: 5}, Margin: 0.05, Budget: 40 * time.Second}
	for _, tc := range []struct {
		base, tuned []float64
		verdict     stats.Verdict
		look        int
		reason      string
	}{
		{[]float64{100, 102, 98}, []float64{80, 83, 79}, stats.Worse, 3, "after 3 trials (its one look: it stopped on the budget short of its count of 5), at 95% confidence"},
		{[]float64{100}, []float64{80}, stats.Undecided, 0, "no decision before 5 trials"},
	} {
		cells := []Cell{
			{ID: "base", Obs: obsOf(tc.base...), TrialTime: 10 * time.Second},
			{ID: "tuned", Baseline: "base", Obs: obsOf(tc.tuned...), TrialTime: 10 * time.Second},
		}
		p, err := Next(cfg, cells, 35*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c := p.Cells[1]
		if !p.Done() || c.Status != Budget || c.Decision.Verdict != tc.verdict || c.Look != tc.look || !strings.HasPrefix(c.Decision.Reason, tc.reason) {
			t.Errorf("%d trials: %s, look %d, %s: %s; want %s at look %d: %s", len(tc.tuned), c.Status, c.Look, c.Decision.Verdict, c.Decision.Reason, tc.verdict, tc.look, tc.reason)
		}
		// At 95% over all its trials: the plain comparison's interval.
		if s := c.Sequential; tc.look > 0 && (s == nil || s.Chosen.RatioCI != c.Comparison.Chosen.RatioCI) {
			t.Errorf("%d trials: sequential comparison %+v, want the plain one at 95%% %+v", len(tc.tuned), s, c.Comparison.Chosen)
		}
	}
}

// TestClosingLookGivenUp: a cell given up at its seventh trial (looks
// at 3, 5, 8, 10) is judged at 6, on its trials before the one that
// failed, as a cell the budget stopped there would be: worse, where it
// kept the look at 5's undecided before. A cell whose baseline was given up is judged on the
// rounds before that.
func TestClosingLookGivenUp(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.05}
	nan := math.NaN()
	base := obsOf(100, 102, 98, 101, 99, 100, 100)
	tuned := obsOf(85, 99, 83, 97, 84, 88, nan)
	at5, err := Next(cfg, []Cell{{ID: "base", Obs: base[:5]}, {ID: "tuned", Baseline: "base", Obs: tuned[:5]}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := at5.Cells[1]; c.Look != 5 || c.Decision.Verdict != stats.Undecided {
		t.Fatalf("at the look at 5: %s (the test's point: undecided there)", c.Decision.Verdict)
	}
	p, err := Next(cfg, []Cell{{ID: "base", Obs: base}, {ID: "tuned", Baseline: "base", Obs: tuned, Failed: "trial 7 failed 3 attempts"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Cells[1]
	if c.Status != Failed || c.Look != 6 || c.Decision.Verdict != stats.Worse || !strings.Contains(c.Decision.Reason, "after 6 trials (a closing look, on its trials before it was given up)") {
		t.Errorf("given up at 7: %s, look %d, %s: %s", c.Status, c.Look, c.Decision.Verdict, c.Decision.Reason)
	}
	// Its baseline given up at the seventh round instead: judged on the
	// 6 rounds before it (it was judged at 7, its trial of the round the
	// baseline failed in counted, and said "after 7 trials (..., on the
	// rounds before its baseline was given up)").
	p, err = Next(cfg, []Cell{{ID: "base", Obs: obsOf(100, 102, 98, 101, 99, 100, nan), Failed: "trial 7 failed 3 attempts"},
		{ID: "tuned", Baseline: "base", Obs: obsOf(85, 99, 83, 97, 84, 88, 89)}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Cells[1]; c.Status != Failed || c.Look != 6 || c.Decision.Verdict != stats.Worse ||
		!strings.Contains(c.Decision.Reason, "after 6 trials (a closing look, on the rounds before its baseline was given up)") {
		t.Errorf("baseline given up at 7: %s, look %d, %s: %s", c.Status, c.Look, c.Decision.Verdict, c.Decision.Reason)
	}
}
