package adaptive

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/stats"
)

// simCell is a cell with a known truth: value = mean · d_round · (1 + sd·z),
// d_round shared by every cell of the round (drift).
type simCell struct {
	id, baseline string
	mean, sd     float64
	trial        time.Duration
	// alternate replaces the random noise by +sd, −sd, +sd, ...: the
	// sample's spread is then known and the test does not hang on luck.
	alternate bool
	// split > 0 makes the cell two-valued: each trial is also
	// multiplied by 1−split or 1+split, by a coin toss (RPS putting a
	// flow's work on one CPU or another).
	split float64
	hold  Hold
}

type history struct {
	plans []Plan
	cells []Cell
	spent time.Duration
}

// simulate runs the controller against simulated cells, as the runner
// would, until it says the run is done (or 1000 rounds, a bug).
func simulate(t *testing.T, cfg Config, sim []simCell, drift float64, seed uint64) history {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	cells := make([]Cell, len(sim))
	for i, s := range sim {
		cells[i] = Cell{ID: s.id, Baseline: s.baseline, TrialTime: s.trial, Hold: s.hold}
	}
	var h history
	for round := 0; round < 1000; round++ {
		p, err := Next(cfg, cells, h.spent)
		if err != nil {
			t.Fatal(err)
		}
		h.plans = append(h.plans, p)
		if p.Done() {
			h.cells = cells
			return h
		}
		d := math.Exp(drift * r.NormFloat64())
		next := map[string]bool{}
		for _, id := range p.Round {
			next[id] = true
		}
		for i, s := range sim {
			z := r.NormFloat64() // drawn for every cell, so seeds line up
			if s.alternate {
				z = float64(1 - 2*(len(cells[i].Obs)%2))
			}
			side := 1.0
			if s.split > 0 { // drawn only here, so the other tests' seeds line up as before
				side += s.split * float64(2*r.IntN(2)-1)
			}
			if next[s.id] {
				cells[i].Obs = append(cells[i].Obs, Obs{Round: round, Value: s.mean * d * side * (1 + s.sd*z)})
				h.spent += s.trial
			}
		}
	}
	t.Fatal("the controller did not finish in 1000 rounds")
	return h
}

func (h history) final(id string) CellPlan {
	for _, c := range h.plans[len(h.plans)-1].Cells {
		if c.ID == id {
			return c
		}
	}
	return CellPlan{}
}

// checkSticky: once a cell stops it never runs again and keeps its status.
func checkSticky(t *testing.T, h history) {
	t.Helper()
	stopped := map[string]Status{}
	for r, p := range h.plans {
		for _, c := range p.Cells {
			if s, ok := stopped[c.ID]; ok && (c.Status != s || c.Next) {
				t.Errorf("round %d: cell %s stopped (%s) but now %s next=%v", r, c.ID, s, c.Status, c.Next)
			}
			if c.Status != Running {
				stopped[c.ID] = c.Status
				if c.Next {
					t.Errorf("round %d: cell %s is %s but scheduled", r, c.ID, c.Status)
				}
			}
		}
	}
}

var rpsCells = []simCell{
	{id: "baseline", mean: 9e9, sd: 0.02, trial: 30 * time.Second},
	{id: "rps", baseline: "baseline", mean: 9e9 * 1.04, sd: 0.02, trial: 30 * time.Second},
	{id: "rfs", baseline: "baseline", mean: 9e9 * 0.97, sd: 0.06, trial: 30 * time.Second},
	{id: "rps+rfs", baseline: "baseline", mean: 9e9, sd: 0.04, trial: 30 * time.Second},
}

func TestStopsAtTarget(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 3, Max: 60}, Precision: &Precision{Metric: "bitrate", HalfWidth: 0.02, Of: OfNormalized}}
	h := simulate(t, cfg, rpsCells, 0.08, 1)
	checkSticky(t, h)
	n := map[string]int{}
	for _, s := range rpsCells[1:] {
		c := h.final(s.id)
		n[s.id] = c.N
		if c.Status != Target || !(c.HalfWidth <= 0.02) || c.N < 3 || c.N > 60 {
			t.Errorf("%s: %s after %d trials, half-width %v: %s", s.id, c.Status, c.N, c.HalfWidth, c.Reason)
		}
		// It stopped at the first round the target was met: one trial
		// fewer was not enough.
		prev := Cell{ID: s.id, Baseline: "baseline", Obs: h.cells[idx(s.id)].Obs[:c.N-1]}
		pp, err := Next(cfg, []Cell{h.cells[0], prev}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.N > 3 && pp.Cells[1].Status != Running {
			t.Errorf("%s: with %d trials it was already %s", s.id, c.N-1, pp.Cells[1].Status)
		}
		t.Logf("%s: %d trials, ±%.2f%%, %s", s.id, c.N, 100*c.HalfWidth, c.Reason)
	}
	if !(n["rfs"] > n["rps"]) {
		t.Errorf("the noisier cell needed %d trials, the quiet one %d", n["rfs"], n["rps"])
	}
	b := h.final("baseline")
	if b.Status != Target || b.N != max(n["rps"], n["rfs"], n["rps+rfs"]) {
		t.Errorf("baseline: %s after %d trials (%s)", b.Status, b.N, b.Reason)
	}
}

func idx(id string) int {
	for i, s := range rpsCells {
		if s.id == id {
			return i
		}
	}
	return -1
}

func TestImpossibleTargetStopsAtMax(t *testing.T) {
	cfg := Config{Trials: Trials{Min: 2, Max: 7}, Precision: &Precision{Metric: "bitrate", HalfWidth: 1e-5, Of: OfNormalized}}
	h := simulate(t, cfg, rpsCells, 0.05, 2)
	checkSticky(t, h)
	for _, c := range h.plans[len(h.plans)-1].Cells {
		if c.Status != Max || c.N != 7 {
			t.Errorf("%s: %s after %d trials, want max after 7", c.ID, c.Status, c.N)
		}
	}
	if len(h.plans) != 8 {
		t.Errorf("%d plans, want 7 rounds and the final one", len(h.plans))
	}
}

func TestRespectsMin(t *testing.T) {
	// Noise 0.1%: two trials would meet ±2%, Min says 5.
	quiet := []simCell{{id: "a", mean: 1, sd: 0.001}, {id: "b", mean: 2, sd: 0.001}}
	cfg := Config{Trials: Trials{Min: 5, Max: 20}, Precision: &Precision{Metric: "m", HalfWidth: 0.02, Of: OfMean}}
	h := simulate(t, cfg, quiet, 0, 3)
	for _, s := range quiet {
		if c := h.final(s.id); c.Status != Target || c.N != 5 {
			t.Errorf("%s: %s after %d trials, want target after 5", s.id, c.Status, c.N)
		}
	}
	// No target at all: every cell runs to Max.
	h = simulate(t, Config{Trials: Trials{Min: 2, Max: 4}}, quiet, 0, 3)
	for _, s := range quiet {
		if c := h.final(s.id); c.Status != Max || c.N != 4 {
			t.Errorf("no target, %s: %s after %d trials", s.id, c.Status, c.N)
		}
	}
}

func TestBudget(t *testing.T) {
	// Three cells on their own, one quiet, one three times noisier, one as
	// noisy and four times slower; an impossible target and a budget of
	// 400 s: the budget stops all three, is never overspent, and the
	// noisy, fast cell gets the most trials (its interval shrinks most per
	// second).
	cells := []simCell{
		{id: "quiet", mean: 100, sd: 0.02, trial: 10 * time.Second, alternate: true},
		{id: "noisy", mean: 100, sd: 0.06, trial: 10 * time.Second, alternate: true},
		{id: "slow-noisy", mean: 100, sd: 0.06, trial: 40 * time.Second, alternate: true},
	}
	cfg := Config{Trials: Trials{Min: 3, Max: 100}, Precision: &Precision{Metric: "m", HalfWidth: 1e-6, Of: OfMean}, Budget: 400 * time.Second}
	h := simulate(t, cfg, cells, 0, 4)
	checkSticky(t, h)
	if h.spent > cfg.Budget {
		t.Errorf("spent %s of a %s budget", h.spent, cfg.Budget)
	}
	for _, s := range cells {
		if c := h.final(s.id); c.Status != Budget || c.N < 3 || !strings.Contains(c.Reason, "budget") {
			t.Errorf("%s: %s after %d trials (%s)", s.id, c.Status, c.N, c.Reason)
		}
	}
	q, n, sn := h.final("quiet"), h.final("noisy"), h.final("slow-noisy")
	t.Logf("spent %s: quiet %d trials ±%.2f%%, noisy %d ±%.2f%%, slow-noisy %d ±%.2f%%",
		h.spent, q.N, 100*q.HalfWidth, n.N, 100*n.HalfWidth, sn.N, 100*sn.HalfWidth)
	if !(n.N > q.N) || !(n.N > sn.N) {
		t.Errorf("trials: quiet %d, noisy %d, slow-noisy %d: want the noisy, fast cell to get the most", q.N, n.N, sn.N)
	}
	// A budget already spent: nothing runs, every cell says budget.
	p, err := Next(cfg, []Cell{{ID: "x", TrialTime: time.Second}}, cfg.Budget)
	if err != nil || !p.Done() || p.Cells[0].Status != Budget {
		t.Errorf("spent budget: %+v %v", p, err)
	}
}

// A baseline short of its minimum runs for its own sake only beside its
// cells: when the budget can pay for its trial alone but not for a pair,
// its cells stop on the budget and so does it (a trial of it alone pairs
// with nothing); with a precision target on its own mean it runs on.
func TestBudgetStopsLoneBaseline(t *testing.T) {
	obs := []Obs{{Round: 1, Value: 100}, {Round: 2, Value: 104}}
	cells := []Cell{
		{ID: "base", Obs: obs, TrialTime: 10 * time.Second},
		{ID: "rfs", Baseline: "base", Obs: obs, TrialTime: 10 * time.Second},
	}
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.05, Budget: 100 * time.Second}
	p, err := Next(cfg, cells, 85*time.Second) // 15 s left: base alone fits, the pair does not
	if err != nil {
		t.Fatal(err)
	}
	if !p.Done() || p.Cells[0].Status != Budget || p.Cells[1].Status != Budget {
		t.Errorf("round %v, base %s (%s), rfs %s: want nothing run, both stopped on the budget",
			p.Round, p.Cells[0].Status, p.Cells[0].Reason, p.Cells[1].Status)
	}
	cfg.Precision = &Precision{Metric: "m", HalfWidth: 0.001, Of: OfMean}
	if p, err = Next(cfg, cells, 85*time.Second); err != nil || len(p.Round) != 1 || p.Round[0] != "base" {
		t.Errorf("with a target of its own mean the baseline runs on: round %v (%v)", p.Round, err)
	}
}

// TestBudgetKeepsCellsBesideTheirBaseline: with a budget, cells compared
// with one baseline run in every round their baseline runs (while the
// budget pays): the baseline runs anyway for the cell whose interval
// shrinks most, so a quiet cell left out would lose its pair of that
// round, and the baseline would reach Max ahead of its cells and stop
// them short of it ("its baseline ran the maximum" after 4 of 10 trials
// in a cni-compare run, whose six variants took turns beside Flannel).
func TestBudgetKeepsCellsBesideTheirBaseline(t *testing.T) {
	cells := []simCell{
		{id: "base", mean: 100, sd: 0.02, trial: time.Second},
		{id: "noisy", baseline: "base", mean: 100, sd: 0.20, trial: time.Second},
		{id: "quiet", baseline: "base", mean: 98, sd: 0.02, trial: time.Second},
		{id: "quiet2", baseline: "base", mean: 98.5, sd: 0.02, trial: time.Second},
	}
	cfg := Config{Trials: Trials{Min: 3, Max: 10}, Margin: 0.02, Budget: time.Hour}
	for seed := uint64(1); seed <= 20; seed++ {
		h := simulate(t, cfg, cells, 0, seed)
		checkSticky(t, h)
		for r, p := range h.plans {
			if !slices.Contains(p.Round, "base") {
				continue
			}
			for _, c := range p.Cells {
				if c.ID != "base" && c.Status == Running && !c.Next {
					t.Fatalf("seed %d, round %d: the baseline runs, %s (running) does not: %s", seed, r, c.ID, c.Reason)
				}
			}
		}
		b := h.final("base")
		for _, id := range []string{"noisy", "quiet", "quiet2"} {
			if c := h.final(id); c.N > b.N || c.Status == Max && c.N < cfg.Trials.Max {
				t.Errorf("seed %d: %s stopped %s after %d trials, its baseline after %d: %s", seed, id, c.Status, c.N, b.N, c.Reason)
			}
		}
	}
}

func TestDecisionStops(t *testing.T) {
	// Margin 2%: a 10% gain is "better" long before ±0.5% precision, an
	// identical tuning is "equal", a 2% gain at the margin runs to max.
	cells := []simCell{
		{id: "base", mean: 1000, sd: 0.03},
		{id: "gain", baseline: "base", mean: 1100, sd: 0.03},
		{id: "same", baseline: "base", mean: 1000, sd: 0.01},
		{id: "latency-up", baseline: "base", mean: 1000 * 1.08, sd: 0.02},
	}
	cfg := Config{Trials: Trials{Min: 3, Max: 30}, Precision: &Precision{Metric: "bitrate", HalfWidth: 0.005, Of: OfNormalized}, Margin: 0.02}
	h := simulate(t, cfg, cells, 0.1, 5)
	checkSticky(t, h)
	for _, tc := range []struct {
		id      string
		verdict stats.Verdict
	}{{"gain", stats.Better}, {"same", stats.Equal}, {"latency-up", stats.Better}} {
		c := h.final(tc.id)
		if c.Status != Target || c.Decision.Verdict != tc.verdict || !strings.Contains(c.Reason, "decision") {
			t.Errorf("%s: %s after %d trials: %s", tc.id, c.Status, c.N, c.Reason)
		}
		// Stopped on a decision: at a planned look, which Look names.
		if !slices.Contains(Looks(cfg.Trials), c.Look) || c.Look != c.N {
			t.Errorf("%s: decided at look %d after %d trials, want a planned look at its count", tc.id, c.Look, c.N)
		}
		t.Logf("%s: %d trials: %s", tc.id, c.N, c.Reason)
	}
	// The same data read as latency: "latency-up" is worse.
	cfg.Direction = stats.LowerIsBetter
	h = simulate(t, cfg, cells, 0.1, 5)
	if c := h.final("latency-up"); c.Decision.Verdict != stats.Worse {
		t.Errorf("latency-up as latency: %s", c.Reason)
	}
	// A fixed design decides at its count but stops on nothing: a cell
	// decided without meeting the precision target ran its maximum.
	cfg = Config{Trials: Trials{Min: 5, Max: 5}, Precision: &Precision{Metric: "bitrate", HalfWidth: 0.005, Of: OfNormalized}, Margin: 0.02}
	h = simulate(t, cfg, cells, 0.1, 5)
	if c := h.final("gain"); c.Decision.Verdict != stats.Better || c.Status != Max || c.N != 5 || strings.Contains(c.Reason, "decision") {
		t.Errorf("gain, fixed 5 trials: %s %s after %d trials: %s", c.Decision.Verdict, c.Status, c.N, c.Reason)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Trials: Trials{Min: 0, Max: 3}}, "trials.min 0"},
		{Config{Trials: Trials{Min: 4, Max: 3}}, "trials.max 3 is below"},
		{Config{Trials: Trials{Min: 1, Max: 3}, Precision: &Precision{HalfWidth: 0, Of: OfMean}}, "halfWidth 0"},
		{Config{Trials: Trials{Min: 1, Max: 3}, Precision: &Precision{HalfWidth: 0.02, Of: "median"}}, `precision.of "median"`},
		{Config{Trials: Trials{Min: 1, Max: 3}, Margin: -1}, "margin -1"},
		{Config{Trials: Trials{Min: 1, Max: 3}, Budget: -time.Second}, "budget -1s"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	norm := Config{Trials: Trials{Min: 1, Max: 3}, Precision: &Precision{HalfWidth: 0.02, Of: OfNormalized}}
	for _, tc := range []struct {
		cells []Cell
		want  string
	}{
		{[]Cell{{ID: "a"}, {ID: "a"}}, "given twice"},
		{[]Cell{{ID: "a", Baseline: "z"}}, `baseline "z" is not among`},
		{[]Cell{{ID: "a", Baseline: "a"}}, "its own baseline"},
		{[]Cell{{ID: "a", Baseline: "b"}, {ID: "b", Baseline: "c"}, {ID: "c"}}, "has a baseline of its own"},
	} {
		if _, err := Next(norm, tc.cells, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.cells, err, tc.want)
		}
	}
	withBudget := norm
	withBudget.Budget = time.Hour
	if _, err := Next(withBudget, []Cell{{ID: "a"}}, 0); err == nil || !strings.Contains(err.Error(), "expected trial time") {
		t.Errorf("budget without trial times: %v", err)
	}
}

func TestFailedTrials(t *testing.T) {
	nan := math.NaN()
	cfg := Config{Trials: Trials{Min: 3, Max: 5}, Precision: &Precision{Metric: "bitrate", HalfWidth: 0.05, Of: OfNormalized}}
	obs := func(vs ...float64) []Obs {
		out := make([]Obs, len(vs))
		for k, v := range vs {
			out[k] = Obs{Round: k, Value: v}
		}
		return out
	}
	cells := []Cell{
		{ID: "base", Obs: obs(100, 90, 110, 95)},
		// Round 1 failed: rounds 0, 2, 3 pair, within ±5%.
		{ID: "ok", Baseline: "base", Obs: obs(101, nan, 111, 96)},
		// Every trial failed: no interval, it runs to the maximum.
		{ID: "broken", Baseline: "base", Obs: obs(nan, nan, nan, nan)},
	}
	p, err := Next(cfg, cells, 0)
	if err != nil {
		t.Fatal(err)
	}
	ok, broken := p.Cells[1], p.Cells[2]
	if ok.Status != Target || ok.N != 4 || ok.Valid != 3 || ok.Comparison.Paired.N != 3 || ok.Comparison.Paired.Incomplete != 1 {
		t.Errorf("ok: %+v", ok)
	}
	if broken.Status != Running || !broken.Next || !math.IsNaN(broken.HalfWidth) || !p.Cells[0].Next {
		t.Errorf("broken: %+v; base next %v", broken, p.Cells[0].Next)
	}
	cells[0].Obs = obs(100, 90, 110, 95, 99)
	cells[2].Obs = obs(nan, nan, nan, nan, nan)
	p, _ = Next(cfg, cells, 0)
	if b := p.Cells[2]; b.Status != Max || !p.Done() || p.Cells[0].Status != Max {
		t.Errorf("after 5: broken %+v, base %+v, round %v", b, p.Cells[0], p.Round)
	}
}
