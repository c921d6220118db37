package adaptive

import "fmt"

// A baseline's status and reasons to run, from the cells compared with it.

// settleBaseline gives a baseline the status its cells leave it: running
// while any of them runs (or while it runs for itself), else target when
// all of them stopped on their target, budget when any stopped for the
// budget, max otherwise; a baseline that stopped on its own (max, or its
// own mean's target) keeps that. A given-up baseline stays failed: in a
// fixed design its cells run on (baselineGivenUp), and were it running
// for them the runner would try the cell it gave up again every round.
func settleBaseline(bp *CellPlan, plans []CellPlan, deps []int, forItself bool) {
	count := map[Status]int{}
	for _, d := range deps {
		count[plans[d].Status]++
	}
	switch {
	case forItself, bp.Status == Failed:
		return
	case count[Running] > 0:
		bp.Status = Running
		bp.Reason = fmt.Sprintf("baseline of %d running cells", count[Running])
		return
	case bp.Status != Running:
		return
	case count[Target]+count[Futile] > 0 && count[Target]+count[Futile]+count[Failed] == len(deps):
		bp.Status = Target
	case count[Budget] > 0:
		bp.Status = Budget
	default:
		bp.Status = Max
	}
	bp.Reason = fmt.Sprintf("every cell compared with it has stopped (target %d, futile %d, max %d, budget %d, failed %d)",
		count[Target], count[Futile], count[Max], count[Budget], count[Failed])
}

// pairless takes the reason to run for its own sake from a baseline
// whose cells the budget has stopped (none still running): short of Min,
// it runs for its own sake only beside them, and a trial of it alone
// would pair with nothing (settleBaseline then stops it on the budget).
// Not called when the baseline has a target on its own mean, which is a
// reason of its own.
func pairless(plans []CellPlan, deps [][]int, self []bool) {
	for b, ds := range deps {
		running, budget := false, false
		for _, d := range ds {
			running = running || plans[d].Status == Running
			budget = budget || plans[d].Status == Budget
		}
		if budget && !running {
			self[b] = false
		}
	}
}
