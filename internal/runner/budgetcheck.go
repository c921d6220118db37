package runner

import (
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A budget too small for the study's minimum (trials.min in every cell)
// stops cells before their first look: they end undecided, and a user
// who learns it at the end of the run has spent the budget for nothing.
// The run says so when it can tell: at its start from the least a trial
// can cost (its duration and pause), and after its first round from
// what that round's trials cost, cluster set-ups included. Each check
// warns at most once and changes nothing: the budget is the user's.

// minimumCheck is what the check after the first round needs.
type minimumCheck struct {
	started bool
	// spent and trials are the run's machine time and trials run when
	// its first round started.
	spent  time.Duration
	trials int
	done   bool
}

// checkBudgetAtStart warns when even the configured trial time (no set-up,
// no knobs, no collectors) makes the study's minimum cost more than its
// budget.
func (r *run) checkBudgetAtStart() {
	if msg := r.shortAtStart(); msg != "" {
		r.minCheck.done = true
		r.notes = append(r.notes, msg)
		r.opt.Progress.Logf("warning: %s", msg)
	}
}

// shortAtStart is checkBudgetAtStart's warning, "" when the minimum
// fits; a dry run says it too (Check), before any machine time is spent.
func (r *run) shortAtStart() string {
	per := r.study.Spec.Duration.Duration + r.pauseTime()
	return r.minimumShort(per, "at least %s a trial: its duration and pause")
}

// beforeRound is called before each round's planning; at the start of
// the run's second round it measures what the first round's trials
// cost each and warns once if the rest of the minimum cannot fit.
func (r *run) beforeRound() error {
	c := &r.minCheck
	switch {
	case c.done || r.design.budget <= 0 || r.opt.Resume:
		// A resumed run replays trials at no cost: its first round says
		// nothing of a trial's cost.
		return nil
	case !c.started:
		c.started, c.spent, c.trials = true, r.spent(), r.trialsRun
		return nil
	}
	n := r.trialsRun - c.trials
	if n <= 0 {
		return nil
	}
	c.done = true
	if msg := r.minimumShort((r.spent()-c.spent)/time.Duration(n), "about %s a trial, as in the first round"); msg != "" {
		return r.warnOnce([]string{msg})
	}
	return nil
}

// minimumShort says why the budget cannot pay for the minimum trials
// still to run at per each, "" when it can (or there is no budget);
// cost says where per comes from, with a %s for it. It counts the cells
// still to run (toRun: cells stopped, given up, this run or the one it
// resumes, or run to their maximum run nothing more), each to its
// minimum (minimumLeft): trials.min, or a held cell's hold
// (adaptive.Hold.Minimum), which the budget must pay for too before the
// cell's first look, and as much in the baseline that runs beside it.
func (r *run) minimumShort(per time.Duration, cost string) string {
	d := r.design
	if d.budget <= 0 || per <= 0 {
		return ""
	}
	t := d.controllerTrials()
	left := r.toRun()
	needs, beside := r.minimumLeft(left, true)
	need, held, heldMin := 0, 0, 0
	for i, u := range left {
		if m := u.hold.Minimum(t); m > t.Min {
			held, heldMin = held+1, max(heldMin, m)
		}
		need += needs[i]
	}
	// A resumed run has spent the interrupted run's time too, though it
	// replays it only as it reaches its trials (budgetEnd counts it so).
	spent := r.spent() + r.unreplayed()
	total := spent + time.Duration(need)*per
	if need == 0 || total <= d.budget {
		return ""
	}
	advice := fmt.Sprintf("raise --budget to %s or more, or lower trials.min", study.ShortDuration(total.Round(time.Minute)+time.Minute))
	switch n := r.opt.BudgetShares; {
	case r.opt.Resume:
		// --resume refuses --budget: the study runs as recorded. A new
		// run pays the whole minimum again.
		fresh := 0
		all, _ := r.minimumLeft(r.units(), false)
		for _, m := range all {
			fresh += m
		}
		advice = fmt.Sprintf("--resume keeps the recorded budget: for the minimum, run the study again in a new directory with --budget %s "+
			"or more, or with a lower trials.min", study.ShortDuration((time.Duration(fresh)*per).Round(time.Minute)+time.Minute))
	case n > 1:
		// The user's --budget is split: it must grow n times as much.
		advice = fmt.Sprintf("raise --budget, which %d runs share, to %s or more, or lower trials.min", n,
			study.ShortDuration(time.Duration(n)*(total.Round(time.Minute)+time.Minute)))
	}
	which := fmt.Sprintf("in each of its %d cells", len(left))
	if len(left) == 1 {
		which = "in its one cell"
	}
	if r.opt.Resume || len(left) < len(r.units()) {
		which += " left to run"
	}
	if held > 0 {
		which += fmt.Sprintf(" (%d in %s held before a decision, as their trials may take a few distinct values", heldMin, cellCount(held))
		if beside > 0 {
			which += ", and in " + baselinesBeside(beside)
		}
		which += ")"
	}
	return fmt.Sprintf("the budget of %s is too small for the study's minimum of %d trials %s: "+
		"they need %s in all ("+cost+"); cells may stop before their first look (%s)",
		study.ShortDuration(d.budget), d.trials.Min, which, study.ShortDuration(total.Round(time.Second)), per.Round(100*time.Millisecond), advice)
}

// cellCount writes n cells: "1 cell", "4 cells".
func cellCount(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}

// baselinesBeside writes n baselines that run beside held cells:
// "their baseline, which runs beside them", "their 2 baselines, which
// run beside them".
func baselinesBeside(n int) string {
	if n == 1 {
		return "their baseline, which runs beside them"
	}
	return fmt.Sprintf("their %d baselines, which run beside them", n)
}

// minimumLeft is, for each of units (in their order), how many more
// trials its minimum takes: trials.min, or a held cell's hold
// (adaptive.Hold.Minimum), less the trials it has counted when counted
// is set (a fresh run's whole minimum when not). A baseline whose cells
// are paired with it (adaptive.Config.Paired: a margin, or a target on
// the ratio) runs in every round any of them runs, so it needs a trial
// in each round they still run that it has none in: beside cells held
// to 8, 8 and not its own 3 (before, the check counted it to trials.min
// and called a budget enough that could not pay the held cells' pairs).
// beside is how many baselines that raised. minimumShort and
// groupBudget both count with it.
func (r *run) minimumLeft(units []unit, counted bool) (need []int, beside int) {
	t := r.design.controllerTrials()
	// counts are a cell's counted trials by round.
	counts := func(c results.Cell) map[int]float64 {
		if l := r.logs[c]; l != nil && counted {
			return l.values
		}
		return nil
	}
	need = make([]int, len(units))
	at := make(map[results.Cell]int, len(units))
	for i, u := range units {
		need[i] = max(u.hold.Minimum(t)-len(counts(u.cell)), 0)
		at[u.cell] = i
	}
	if !r.design.config("", 0).Paired() {
		return need, 0
	}
	deps := map[int][]int{} // a baseline's cells among units, by index
	for i, u := range units {
		if b, ok := r.versusOf(u.cell); ok {
			if j, ok := at[b]; ok {
				deps[j] = append(deps[j], i)
			}
		}
	}
	for j, cells := range deps {
		has := counts(units[j].cell)
		// The rounds its cells still run: in a run going on, the rounds
		// after every one counted; in a resumed run, from round 1 on, the
		// rounds the interrupted run counted none of the cell's trials in
		// (their trials run again there; the baseline's counted ones are
		// replayed at no cost).
		from := 0
		if !r.opt.Resume {
			for k := range has {
				from = max(from, k)
			}
			for _, i := range cells {
				for k := range counts(units[i].cell) {
					from = max(from, k)
				}
			}
		}
		runs := map[int]bool{}
		for _, i := range cells {
			own := counts(units[i].cell)
			for k, n := from, need[i]; n > 0; {
				k++
				if _, ok := own[k]; !ok {
					runs[k] = true
					n--
				}
			}
		}
		n := 0
		for k := range runs {
			if _, ok := has[k]; !ok {
				n++
			}
		}
		if n > need[j] {
			need[j], beside = n, beside+1
		}
	}
	return need, beside
}
