package adaptive

import "fmt"

// baselineGivenUp marks the cells whose baseline the runner gave up
// (judge already stopped the given-up cells themselves): each says which
// baseline and why (CellPlan.BaselineFailed), since its comparison rests
// on the rounds before that and more trials of it pair with nothing.
//
// In an adaptive design it stops the running ones as failed. A given-up
// cell is then no running dependant of its baseline, so settleBaseline
// does not keep the baseline running for it: without this, a tuning
// given up at its first trial kept its baseline running alone, every
// round, up to Trials.Max. A fixed design promises its count in every
// cell it can measure, paired or not: those cells run on, without their
// baseline (Next leaves a failed baseline out of every round).
func baselineGivenUp(cfg Config, plans []CellPlan, cells []Cell, base []int) {
	for i, b := range base {
		if b < 0 || plans[b].Status != Failed {
			continue
		}
		why := fmt.Sprintf("its baseline %s was given up (%s)", cells[b].ID, cells[b].Failed)
		plans[i].BaselineFailed = why
		switch {
		case plans[i].Status == Running && !cfg.Trials.Fixed():
			plans[i].Status = Failed
			plans[i].Reason = why + "; " + plans[i].Reason
		case cells[i].Failed == "":
			plans[i].Reason += "; " + why + ": compared with the baseline's trials before that"
		}
	}
}
