package adaptive

import (
	"fmt"

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
func closingLook(cfg Config, p *CellPlan, c, base Cell) {
	early := (p.Status == Budget || p.Status == Max || p.Status == Target) && p.N < cfg.Trials.Max
	if cfg.Margin == 0 || !early || p.N <= p.Look || p.N < c.minimum(cfg.Trials) {
		return
	}
	obs, x := byRound(c.Obs)
	conf := DecisionConfidence(cfg.Trials)
	seq := stats.CompareAt(x, alignRounds(obs, base.Obs), cfg.Margin, cfg.Direction, conf)
	p.Sequential, p.Look = &seq, p.N
	p.Decision = seq.Decision
	p.Decision.Reason = fmt.Sprintf("after %d trials (a closing look: the cell stopped between planned looks), at %s confidence: %s",
		p.N, stats.LevelText(conf), seq.Decision.Reason)
}
