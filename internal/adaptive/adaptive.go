// Package adaptive decides, after each interleaved round of trials, which
// cells of a run need another round: the adaptive repetitions of issue 11.
// It is pure: the runner gives it the samples so far and the machine time
// spent, and runs what it says; docs/statistics.md ("Adaptive stopping")
// describes the rule.
//
// Design notes. The controller keeps no state between calls: every
// decision is recomputed from the observations, so a resumed run gets the
// same plan as an uninterrupted one. Stopping is still final, because a
// stopped cell's numbers never change: a cell is judged only on the rounds
// it ran (against its baseline's values from those same rounds), and a
// stopped cell runs no more rounds. The budget only shrinks, so a cell
// stopped for the budget stays stopped too (as long as the runner's
// trial-time estimates do not fall).
//
// A cell normalized to a baseline (or judged by a decision against it)
// needs the baseline's value from the same round to pair with, so a
// baseline runs in every round in which any of its cells runs, whatever
// its own precision; a baseline the runner gave up runs in none
// (failed.go).
package adaptive

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/cnibench/cnibench/internal/stats"
)

// Obs is one trial of a cell: its round and the metric's value (NaN when
// the trial failed or did not give the metric; it still counts as a trial).
type Obs struct {
	Round int
	Value float64
	// Part is the part of the run that measured it (results.Sample.Part:
	// 0 before any --resume). A round whose trials of a cell and of its
	// baseline are of different parts ran either side of an interruption
	// and is no pair: it is left out of the paired statistic and kept in
	// the unpaired one (apart).
	Part int
}

// Cell is what the controller knows about one cell.
type Cell struct {
	ID string
	// Baseline is the ID of the cell this one is compared with (the
	// baseline tuning at the same datapath, workload and replica count);
	// "" for a baseline itself. It is used with Of normalized or a Margin.
	Baseline string
	// Obs are the cell's trials so far, one per round it ran, in any order.
	Obs []Obs
	// TrialTime is the expected machine time of one more trial of this
	// cell (the mean of its trials so far, or the configured duration plus
	// setup before the first). Needed when there is a budget.
	TrialTime time.Duration
	// Failed is why the runner gave the cell up (a trial failed every
	// attempt); "" while it may run. A given-up cell is stopped: it runs
	// no more rounds, and needs its baseline in none (failed.go).
	Failed string
	// Hold holds a cell whose trials may take a few distinct values to
	// more trials than Trials.Min before it stops on anything of its
	// own (hold.go); the zero Hold holds nothing.
	Hold Hold
}

// Status is why a cell stopped, or that it has not.
type Status string

const (
	Running Status = "running"
	// Target: the precision target is met or the decision is reached.
	Target Status = "target"
	// Max: the cell ran Trials.Max trials without reaching the target, or
	// its baseline did (under a budget a cell may have run fewer rounds
	// than its baseline, and cannot pair another).
	Max Status = "max"
	// Budget: the remaining budget cannot pay for another trial of the
	// cell (and of its baseline, which must run in the same round).
	Budget Status = "budget"
	// Futile: at a look the cell is undecided, and it would still be at
	// Trials.Max if its estimate held and its interval shrank as 1/√n
	// (futility.go); more rounds would buy no decision.
	Futile Status = "futile"
	// Failed: the runner gave the cell up (Cell.Failed), or, in an
	// adaptive design, its baseline was given up and it has nothing to
	// pair another round with.
	Failed Status = "failed"
)

// CellPlan is the controller's word on one cell.
type CellPlan struct {
	ID     string
	Status Status
	// Next is set when the cell runs in the next round.
	Next bool
	// N is the number of trials run; Valid those with a finite value.
	N, Valid int
	// HalfWidth is the relative half-width of the interval the target is
	// judged on (see Of); NaN when it cannot be computed yet.
	HalfWidth float64
	// Comparison is the comparison with the baseline over the rounds the
	// cell ran, at the nominal 95%: the numbers a report shows. nil for a
	// cell that is not compared with a baseline.
	Comparison *stats.Comparison
	// Sequential is the comparison at the last look (see Looks) the cell
	// has passed, over its first trials up to that look, with intervals
	// at DecisionConfidence; nil before the first look and for a cell
	// without a baseline. In an adaptive run its chosen interval is the
	// one to report with the decision: it covers the true ratio with at
	// least 95% probability whenever the cell stopped (per cell: a run of
	// K cells may hold up to 0.05·K wrong calls).
	Sequential *stats.Comparison
	// Look is the trial count Sequential was judged at (0 before the
	// first look).
	Look int
	// Decision is Sequential's decision, with the look in the reason;
	// Undecided before the first look. With a Margin this is the decision
	// to report.
	Decision stats.Decision
	// BaselineFailed names the cell's baseline and why the runner gave it
	// up ("" when it did not): Comparison and Decision rest on the rounds
	// before that, and no more trials of the cell pair with it.
	BaselineFailed string
	// Reason says why the cell has this status, for the report.
	Reason string
	// Held says why the cell was held beyond Trials.Min before a
	// decision (Cell.Hold), "" when it was not; Reason says it too.
	Held string
	// HeldTo is the trial count it was held to (Hold.Minimum), 0 when
	// it was not: what stops.json records (results.Stop.Held), so that
	// a replay of the controller can hold the cell alike.
	HeldTo int
}

// Plan is the controller's answer after a round.
type Plan struct {
	// Cells are in the order given.
	Cells []CellPlan
	// Round lists the IDs of the cells to run in the next round, in the
	// order given; empty when the run is done.
	Round []string
	// Cost is the expected machine time of that round.
	Cost time.Duration
}

// Done reports whether no cell runs again.
func (p Plan) Done() bool { return len(p.Round) == 0 }

// Next returns the plan for the next round, given every cell's trials so
// far and the machine time spent by the run (trials and everything
// between them, as the budget counts it).
func Next(cfg Config, cells []Cell, spent time.Duration) (Plan, error) {
	if err := cfg.Validate(); err != nil {
		return Plan{}, err
	}
	idx := map[string]int{}
	for i, c := range cells {
		if _, dup := idx[c.ID]; dup {
			return Plan{}, fmt.Errorf("cell %q is given twice", c.ID)
		}
		idx[c.ID] = i
	}
	linked := cfg.Paired()
	base := make([]int, len(cells)) // index of the baseline, -1 for none
	deps := make([][]int, len(cells))
	for i, c := range cells {
		base[i] = -1
		if c.Baseline == "" || !linked {
			continue
		}
		b, ok := idx[c.Baseline]
		switch {
		case !ok:
			return Plan{}, fmt.Errorf("cell %q: baseline %q is not among the cells", c.ID, c.Baseline)
		case b == i:
			return Plan{}, fmt.Errorf("cell %q is its own baseline", c.ID)
		case cells[b].Baseline != "":
			return Plan{}, fmt.Errorf("cell %q: its baseline %q has a baseline of its own", c.ID, c.Baseline)
		}
		base[i] = b
		deps[b] = append(deps[b], i)
	}

	plans := make([]CellPlan, len(cells))
	for i, c := range cells {
		plans[i] = judge(cfg, c, cells, base[i], len(deps[i]) > 0)
	}
	baselineGivenUp(cfg, plans, cells, base)
	// A cell whose baseline has run its maximum cannot pair another round.
	for i, b := range base {
		if b >= 0 && plans[i].Status == Running && plans[b].N >= cfg.Trials.Max {
			plans[i].Status = Max
			plans[i].Reason = fmt.Sprintf("its baseline %s ran the maximum of %s; %s", cells[b].ID, TrialCount(cfg.Trials.Max), plans[i].Reason)
		}
	}
	remaining := time.Duration(math.MaxInt64)
	if cfg.Budget > 0 {
		remaining = cfg.Budget - spent
	}
	// pair is the baseline that runs beside cell i, -1 for none: a
	// given-up baseline runs in no round (a fixed design's cells of it
	// still run theirs).
	pair := func(i int) int {
		if b := base[i]; b >= 0 && plans[b].Status != Failed {
			return b
		}
		return -1
	}
	// cost of running cell i alone: its trial and its baseline's.
	alone := func(i int) time.Duration {
		d := cells[i].TrialTime
		if b := pair(i); b >= 0 {
			d += cells[b].TrialTime
		}
		return d
	}
	// forItself: a baseline that still runs for its own sake (it has not
	// had its Min trials, or it is judged on its own mean and has not met
	// that target); a baseline otherwise runs only beside its cells.
	self := make([]bool, len(cells))
	for i := range cells {
		own := len(deps[i]) == 0 || plans[i].N < cells[i].Hold.Minimum(cfg.Trials) || cfg.Precision != nil && cfg.Precision.Of == OfMean
		self[i] = plans[i].Status == Running && own
	}
	forItself := func(i int) bool { return self[i] && plans[i].Status == Running }
	for i := range cells {
		if !forItself(i) || cfg.Budget == 0 {
			continue
		}
		if b := pair(i); cells[i].TrialTime <= 0 || b >= 0 && cells[b].TrialTime <= 0 {
			return Plan{}, fmt.Errorf("cell %q: a budget needs the expected trial time of the cell and of its baseline", cells[i].ID)
		}
		if alone(i) > remaining {
			plans[i].Status = Budget
			plans[i].Reason = fmt.Sprintf("the remaining budget %s cannot pay for another trial (%s)",
				max(remaining, 0).Round(time.Second), alone(i).Round(time.Second))
		}
	}
	if cfg.Precision == nil || cfg.Precision.Of != OfMean {
		pairless(plans, deps, self)
	}
	// A cell stopped between two looks is judged at its count.
	for i, b := range base {
		if b >= 0 {
			closingLook(cfg, &plans[i], cells[i], cells[b])
		}
	}
	// A baseline with cells of its own runs while any of them does.
	for b := range cells {
		if len(deps[b]) > 0 {
			settleBaseline(&plans[b], plans, deps[b], forItself(b))
		}
	}
	// A held cell says so, whatever stopped it.
	for i, c := range cells {
		if h := c.held(cfg.Trials); h != "" {
			plans[i].Held, plans[i].HeldTo = h, c.Hold.Minimum(cfg.Trials)
			plans[i].Reason += "; " + h
		}
	}

	// The next round: without a budget, every cell that wants one.
	var want []int
	for i := range cells {
		if forItself(i) {
			want = append(want, i)
		}
	}
	in := make([]bool, len(cells))
	var cost time.Duration
	extra := func(i int) time.Duration {
		var d time.Duration
		for _, j := range []int{i, pair(i)} {
			if j >= 0 && !in[j] {
				d += cells[j].TrialTime
			}
		}
		return d
	}
	add := func(i int) {
		cost += extra(i)
		in[i] = true
		if b := pair(i); b >= 0 {
			in[b] = true
		}
	}
	switch {
	case cfg.Budget == 0:
		for _, i := range want {
			add(i)
		}
	default:
		// With a budget, a round takes the cells whose expected shrinking
		// per second is at least half the best one's (so cells alike all
		// run, interleaved, and a noisy cell runs more often than a quiet
		// one), best first, as far as the budget goes.
		order := append([]int(nil), want...)
		score := make(map[int]float64, len(order))
		best := math.Inf(-1)
		for _, i := range order {
			score[i] = priority(plans[i], cfg, cells[i].Hold.Minimum(cfg.Trials), alone(i))
			best = math.Max(best, score[i])
		}
		sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
		for _, i := range order {
			if score[i] >= best/2 && cost+extra(i) <= remaining {
				add(i)
			}
		}
		// A baseline in the round runs anyway: its other running cells
		// join it where the budget pays for their own trial. Left out,
		// a cell would lose that round's pair, and the baseline would
		// reach Max ahead of it and stop it short of Max.
		for _, i := range order {
			if b := base[i]; b >= 0 && in[b] && !in[i] && cost+extra(i) <= remaining {
				add(i)
			}
		}
		for _, i := range want {
			if !in[i] {
				plans[i].Reason = "deferred this round: the budget goes first to the intervals that shrink most per second; " + plans[i].Reason
			}
		}
	}
	p := Plan{Cells: plans, Cost: cost}
	for i := range cells {
		if in[i] {
			plans[i].Next = true
			p.Round = append(p.Round, cells[i].ID)
		}
	}
	return p, nil
}

// priority is the expected shrinking of the relative half-width of the
// interval a cell is judged on from one more trial, per second of
// machine time. That interval is the cell's ratio to its baseline (the
// one stats.Choose takes, with the baseline's noise and the pairing in
// it) when the cell has a comparison and no target on its own mean,
// else its mean's. With n values a half-width scales as t(df)/√n, so
// one more trial removes the share 1 − √(n/(n+1))·t(df+1)/t(df) of it:
// at 3 trials the quantile's fall is most of it. Cells short of their
// minimum (Min, or a held cell's hold) come first; a cell that has had
// it but still has no half-width (its trials failed, or its values give
// no interval) comes last, so it cannot take the budget from the cells
// that can use it.
func priority(p CellPlan, cfg Config, from int, cost time.Duration) float64 {
	if p.N < from {
		return math.Inf(1)
	}
	hw, df := p.HalfWidth, float64(p.Valid-1)
	if p.Comparison != nil && !(cfg.Precision != nil && cfg.Precision.Of == OfMean) {
		ch := p.Comparison.Chosen
		hw, df = stats.RelHalfWidth(ch.Ratio, ch.Low, ch.High), ch.DF
	}
	if math.IsNaN(hw) || !(df > 0) {
		return 0
	}
	n := float64(p.Valid)
	return hw * (1 - math.Sqrt(n/(n+1))*stats.TQuantile(df+1)/stats.TQuantile(df)) / cost.Seconds()
}
