package adaptive

import (
	"fmt"
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// closingLook judges a cell that stopped between two planned looks once
// more, at the count it reached: stopped by the budget, because its
// baseline reached the maximum in rounds the budget gave to the cell's
// siblings, or because it met its precision target (a decision reached
// stops a cell only at a look). Without it the decision of a quick,
// budget-bound run rests on the last planned look: a tuning 20-32% below
// its baseline in each of four pairs stayed "undecided": the look at
// three trials was too early and the one at five never came; and a cell
// meeting its target at 4 trials (looks at 3, 5, 8, 10) kept the
// decision of 3 and was reported undecided though its 4 trials decide it.
//
// It keeps the error bound: such a cell stops before its maximum (the
// rule holds for N < Max only), so the looks it has passed plus this one
// are at most the K planned ones (Looks): the look at Max, never reached,
// is the one this takes the place of. Each is at DecisionConfidence, and
// Bonferroni bounds their wrong decisions by 5% whichever counts they
// fall at. What the bound does not see is that the stopping count
// depends on the data: under a budget a cell whose interval shrinks
// slowly gets more of it, and a precision target stops a cell when its
// interval is narrow, which is when its spread came out small.
// TestClosingLook and TestClosingLookAtTarget measure the wrong
// decisions and the coverage with that in play.
//
// A cell the runner gave up (or whose baseline it gave up) is judged
// the same way, on its trials before the one that failed (before the
// round its baseline's failed in): it stopped between looks too, on
// something other than its values. A fixed
// design's cell that the budget (or a give-up) stopped short of its
// count gets its one look there, at 95% (DecisionConfidence of one
// look): its stop did not depend on its data, since every cell of a
// fixed design is short of its minimum until its count and the budget
// goes to them in the order given. Without it such a cell, however
// clear its trials, said "no decision before N trials" (TestClosingLookFixed).
func closingLook(cfg Config, p *CellPlan, c, base Cell) {
	stopped := p.Status == Budget || p.Status == Max || p.Status == Target || p.Status == Failed
	if cfg.Margin == 0 || !stopped {
		return
	}
	obs, x := byRound(c.Obs)
	if c.Failed != "" && len(x) > 0 && math.IsNaN(x[len(x)-1]) {
		// Given up: judged on the rounds before the trial that failed.
		obs, x = obs[:len(obs)-1], x[:len(x)-1]
	}
	if r, ok := failedRound(base); ok {
		// Its baseline given up: judged on the rounds before the one
		// the baseline failed in, which has no pair (the cell's trial
		// of it is left out, as the reason says).
		k := 0
		for k < len(obs) && obs[k].Round < r {
			k++
		}
		obs, x = obs[:k], x[:k]
	}
	n := len(obs)
	if n >= cfg.Trials.Max || n <= p.Look || !cfg.Trials.Fixed() && n < c.Hold.Minimum(cfg.Trials) {
		return
	}
	conf := DecisionConfidence(cfg.Trials)
	bx, split := alignRounds(obs, base.Obs)
	seq := compareAt(x, bx, split, cfg, conf)
	why := "a closing look: the cell stopped between planned looks"
	switch {
	case cfg.Trials.Fixed() && seq.Chosen.Method == stats.MethodNone:
		return // no interval: "no decision before N trials" stays true
	case cfg.Trials.Fixed():
		why = fmt.Sprintf("its one look: it stopped %s short of its count of %d", stoppedBy(p.Status), cfg.Trials.Max)
	case c.Failed != "":
		why = "a closing look, on its trials before it was given up"
	case p.Status == Failed:
		why = "a closing look, on the rounds before its baseline was given up"
	}
	p.Sequential, p.Look = &seq, n
	p.Decision = seq.Decision
	p.Decision.Reason = fmt.Sprintf("after %s (%s), at %s confidence: %s",
		TrialCount(n), why, stats.LevelText(conf), seq.Decision.Reason)
}

// failedRound is the round in which the runner gave cell c up: its last,
// whose trial failed (NaN); ok is false for a cell not given up.
func failedRound(c Cell) (round int, ok bool) {
	if c.Failed == "" {
		return 0, false
	}
	obs, x := byRound(c.Obs)
	if len(x) == 0 || !math.IsNaN(x[len(x)-1]) {
		return 0, false
	}
	return obs[len(obs)-1].Round, true
}

// stoppedBy names what stopped a cell of a fixed design short of its
// count.
func stoppedBy(s Status) string {
	switch s {
	case Budget:
		return "on the budget"
	case Failed:
		return "given up"
	}
	return "as " + string(s)
}
