package adaptive

import "fmt"

// stopGivenUp stops the cells whose baseline the runner gave up: they
// cannot pair another round (judge already stopped the given-up cells
// themselves). A given-up cell is then no running dependant of its
// baseline, so settleBaseline does not keep the baseline running for
// it: without this, a tuning given up at its first trial kept its
// baseline running alone, every round, up to Trials.Max.
func stopGivenUp(plans []CellPlan, cells []Cell, base []int) {
	for i, b := range base {
		if b >= 0 && plans[i].Status == Running && plans[b].Status == Failed {
			plans[i].Status = Failed
			plans[i].Reason = fmt.Sprintf("its baseline %s was given up (%s); %s", cells[b].ID, cells[b].Failed, plans[i].Reason)
		}
	}
}
