package adaptive

import (
	"math"
	"strings"
	"testing"
)

// A cell the runner gave up is stopped as failed, and its baseline no
// longer runs for it: once the baseline's other cells stop, so does the
// baseline (it used to run alone, every round, to Max).
func TestGivenUpCellStops(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 2, Max: 30}, Margin: 0.05}
	obs := func(vs ...float64) []Obs {
		out := make([]Obs, len(vs))
		for k, v := range vs {
			out[k] = Obs{Round: k + 1, Value: v}
		}
		return out
	}
	cells := []Cell{
		{ID: "base", Obs: obs(100, 100)},
		{ID: "broken", Baseline: "base", Obs: obs(math.NaN()), Failed: "trial 1 failed 3 attempts"},
		{ID: "ok", Baseline: "base", Obs: obs(120, 80)}, // undecided: runs on
	}
	p, err := Next(cfg, cells, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b := p.Cells[1]; b.Status != Failed || b.Next || !strings.Contains(b.Reason, "trial 1 failed") {
		t.Errorf("given-up cell: %+v", b)
	}
	if !p.Cells[2].Next || !p.Cells[0].Next {
		t.Errorf("the live cell and its baseline should run on: %+v", p.Cells)
	}
	// Once the live cell is given up too, the
	// baseline stops.
	cells[2].Failed = "trial 3 failed 3 attempts"
	p, _ = Next(cfg, cells, 0)
	if !p.Done() || p.Cells[0].Status == Running {
		t.Errorf("every cell of the baseline stopped, yet round %v, baseline %+v", p.Round, p.Cells[0])
	}
	// A given-up baseline stops its cells: they have nothing to pair with.
	cells[0].Failed, cells[2].Failed = "trial 3 failed 3 attempts", ""
	p, _ = Next(cfg, cells, 0)
	if ok := p.Cells[2]; !p.Done() || ok.Status != Failed || !strings.Contains(ok.Reason, "baseline base was given up") ||
		!strings.Contains(ok.BaselineFailed, "base was given up (trial 3 failed") {
		t.Errorf("given-up baseline: round %v, its cell %+v", p.Round, ok)
	}
	// A fixed design runs its count in every cell it can measure: the
	// cell of a given-up baseline (another datapath beside a first one
	// that broke) goes on, without the baseline: a round listing it made
	// the runner try the cell it gave up again, every round, and count
	// any trial that then passed.
	cfg.Trials = Trials{Min: 5, Max: 5}
	p, _ = Next(cfg, cells, 0)
	if ok := p.Cells[2]; !ok.Next || ok.Status != Running || ok.BaselineFailed == "" {
		t.Errorf("fixed design, given-up baseline: round %v, its cell %+v", p.Round, ok)
	}
	if b := p.Cells[0]; b.Next || b.Status != Failed || len(p.Round) != 1 {
		t.Errorf("fixed design: the given-up baseline is in round %v: %+v", p.Round, b)
	}
	// At its count the cell stops on it, saying what it was compared
	// with: the baseline's trials before it was given up.
	cells[2].Obs = obs(120, 80, 110, 90, 100)
	p, _ = Next(cfg, cells, 0)
	if ok := p.Cells[2]; !p.Done() || ok.Status != Max || !strings.Contains(ok.Reason, "baseline base was given up") {
		t.Errorf("fixed design at its count: round %v, its cell %+v", p.Round, ok)
	}
}
