package adaptive

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/stats"
)

// TestBudgetGoesToTheRatio: in a design with a margin the budget goes to
// the cell whose ratio to the baseline (the interval the decision is
// made on) shrinks most, not the one whose own mean does. Here "paired"
// moves with the baseline from round to round (its own mean spreads
// 8%, its ratio under 1%: 1.05, at the margin, undecided), "loose"
// does not (its own mean spreads 5%, its ratio 10%); the budget pays
// for one of them beside the baseline this round. By its own mean
// "paired" came first; by the ratio "loose" does.
func TestBudgetGoesToTheRatio(t *testing.T) {
	d := []float64{0.90, 1.10, 0.95, 1.05}
	e := []float64{1.06, 0.94, 1.03, 0.97}
	var base, paired, loose []float64
	for k := range d {
		base = append(base, 100*d[k])
		paired = append(paired, 105*d[k]*(1+0.002*float64(k%2*2-1)))
		loose = append(loose, 100*e[k])
	}
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.05, Budget: 100 * time.Second}
	cells := []Cell{
		{ID: "base", Obs: obsOf(base...), TrialTime: 10 * time.Second},
		{ID: "paired", Baseline: "base", Obs: obsOf(paired...), TrialTime: 10 * time.Second},
		{ID: "loose", Baseline: "base", Obs: obsOf(loose...), TrialTime: 10 * time.Second},
	}
	p, err := Next(cfg, cells, 80*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Cells[1:] {
		if c.Status != Running {
			t.Fatalf("%s: %s (%s); want both running (the test's point)", c.ID, c.Status, c.Reason)
		}
	}
	if p.Cells[1].HalfWidth <= p.Cells[2].HalfWidth {
		t.Fatalf("own means' half-widths: paired %.3f, loose %.3f; want paired's wider (the test's point)", p.Cells[1].HalfWidth, p.Cells[2].HalfWidth)
	}
	if !slices.Equal(p.Round, []string{"base", "loose"}) {
		t.Errorf("round %v, want base and loose: %s", p.Round, p.Cells[1].Reason)
	}
}

// The share one more trial takes off a half-width: √(n/(n+1)) for the
// standard error and t(df+1)/t(df) for the quantile.
func TestPriority(t *testing.T) {
	cmp := &stats.Comparison{Chosen: stats.Choice{RatioCI: stats.RatioCI{Ratio: 1, Low: 0.9, High: 1.1, DF: 2, Method: stats.MethodPairedT}}}
	p := CellPlan{N: 3, Valid: 3, HalfWidth: 0.5, Comparison: cmp}
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.05}
	want := 0.1 * (1 - math.Sqrt(3.0/4)*stats.TQuantile(3)/stats.TQuantile(2)) / 2
	if got := priority(p, cfg, 3, 2*time.Second); math.Abs(got-want) > 1e-12 {
		t.Errorf("priority %v, want %v (the ratio's ±10%%, not the mean's ±50%%)", got, want)
	}
	// A target on the mean: the mean's half-width.
	cfg.Precision = &Precision{Metric: "m", HalfWidth: 0.01, Of: OfMean}
	if got := priority(p, cfg, 3, 2*time.Second); math.Abs(got-5*want) > 1e-12 {
		t.Errorf("target on the mean: priority %v, want %v", got, 5*want)
	}
	if got := priority(p, cfg, 5, 2*time.Second); !math.IsInf(got, 1) {
		t.Errorf("short of its minimum: %v", got)
	}
}
