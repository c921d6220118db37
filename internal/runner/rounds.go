package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// metricOf is the metric a workload variant's cells are judged on: the
// precision target's, else the tool's first headline metric.
func (r *run) metricOf(w study.Workload) string {
	return registry.DecidedMetric(r.design.precision, w)
}

// group is the cells of one workload variant at one datapath and replica
// count: they share a metric, and each tuning is paired with the
// baseline of its impairment in the same rounds.
type group struct {
	metric string
	units  []unit
	spent  time.Duration
}

func (r *run) groupsOf(units []unit) []*group {
	var out []*group
	idx := map[string]*group{}
	for _, u := range units {
		g, ok := idx[u.work.Name]
		if !ok {
			g = &group{metric: r.metricOf(u.work)}
			idx[u.work.Name] = g
			out = append(out, g)
		}
		g.units = append(g.units, u)
	}
	return out
}

// cellID names a cell for the controller and in messages.
func cellID(c results.Cell) string {
	return fmt.Sprintf("%s/%s/%s/r%d%s", c.Datapath, c.Workload, c.Tuning, c.Replicas, impairedBy(c, "/"))
}

// plan asks the controller which of the group's cells run in round
// (from the values of the rounds before it, so a resumed run plans its
// rounds as the interrupted one did, but for the round the interruption
// cut: its trials either side of it pair with none, adaptive.Obs.Part).
func (r *run) planRound(g *group, round int, budget time.Duration) (adaptive.Plan, error) {
	ids := map[results.Cell]bool{}
	for _, u := range g.units {
		ids[u.cell] = true
	}
	cells := make([]adaptive.Cell, 0, len(g.units))
	for _, u := range g.units {
		l := r.cellLog(u.cell)
		// A given-up cell goes to the controller as failed: stopped, and
		// no reason for its baseline to run.
		c := adaptive.Cell{ID: cellID(u.cell), TrialTime: r.trialTime(l), Failed: l.failed, Hold: u.hold}
		if b, ok := r.versusOf(u.cell); ok && ids[b] {
			c.Baseline = cellID(b)
		}
		for k, v := range l.values {
			if k < round {
				c.Obs = append(c.Obs, adaptive.Obs{Round: k, Value: v, Part: l.parts[k]})
			}
		}
		sort.Slice(c.Obs, func(i, j int) bool { return c.Obs[i].Round < c.Obs[j].Round })
		cells = append(cells, c)
	}
	return adaptive.Next(r.design.config(g.metric, budget), cells, g.spent)
}

// trialTime is the expected machine time of a cell's next trial: the
// mean of its trials so far, else the configured duration and pause plus
// the overhead seen so far (knobs, collectors), 3 s before any.
func (r *run) trialTime(l *cellLog) time.Duration {
	if m := l.meanWall(); m > 0 {
		return m
	}
	over := 3 * time.Second
	if r.trialsRun > 0 {
		over = r.overhead / time.Duration(r.trialsRun)
	}
	return r.study.Spec.Duration.Duration + r.pauseTime() + over
}

// trials runs the cells of one datapath at one replica count in
// interleaved rounds (block).
func (r *run) trials(ctx context.Context, c engine.Cluster, reps int, tgt *knob.Target) error {
	units, err := r.cellsAt(reps, tgt)
	if err != nil {
		return err
	}
	return r.block(units, func(u unit, round int) (time.Duration, error) {
		t0 := time.Now()
		err := r.runTrial(ctx, c, u, round, tgt)
		return time.Since(t0), err
	})
}

// block runs one block's cells in interleaved rounds: round k of every
// cell the controller keeps running before round k+1 of any. Trial
// numbers are round numbers, so trial k of a tuning and of its baseline
// ran in the same round (the paired analysis pairs them by it). run is
// one trial, returning its machine time (runUnit; tests give a fake).
func (r *run) block(units []unit, run func(u unit, round int) (time.Duration, error)) error {
	b, err := r.startBlock(units)
	if err != nil || b == nil {
		return err
	}
	for round := 1; ; round++ {
		if err := r.beforeRound(); err != nil {
			return err
		}
		jobs, err := r.planBlock(b, round)
		if err != nil {
			return err
		}
		if len(jobs) == 0 {
			break
		}
		if err := r.runJobs(jobs, round, run); err != nil {
			return err
		}
	}
	return r.finishBlock(b)
}

// blockRun is one block's state between its rounds.
type blockRun struct {
	groups []*group
	// allowance is what a group may spend in all, the controller's
	// budget (0: none): a share of the run's budget fixed at the block's
	// start (groupBudget), or in a run of blocks side by side what it has
	// spent plus a share of what is left (interleave.go).
	allowance func(*group) time.Duration
	// last is the controller's plan of each group at the latest round.
	last []adaptive.Plan
}

// job is one trial a round runs: a unit of a group.
type job struct {
	u unit
	g *group
}

// startBlock begins a block: nil when an interrupted run had finished it
// or the budget was spent before it (both recorded here).
func (r *run) startBlock(units []unit) (*blockRun, error) {
	groups := r.groupsOf(units)
	if r.resumeFinished(units) {
		return nil, nil
	}
	budget, ok := r.groupBudget(groups)
	if !ok {
		return nil, r.budgetSpent(units, groups)
	}
	return &blockRun{groups: groups, allowance: budget}, nil
}

// planBlock asks the controller which of the block's cells run in round;
// none means the block is finished.
func (r *run) planBlock(b *blockRun, round int) ([]job, error) {
	var todo []job
	b.last = b.last[:0]
	for _, g := range b.groups {
		p, err := r.planRound(g, round, b.allowance(g))
		if err != nil {
			return nil, fmt.Errorf("plan round %d: %w", round, err)
		}
		b.last = append(b.last, p)
		in := map[string]bool{}
		for _, id := range p.Round {
			in[id] = true
		}
		for _, u := range g.units {
			// A trial the interrupted run counted is a fact: it is
			// replayed in its round whatever the plan says. The plan can
			// differ from that run's (the set-up time samples do not
			// record, a budget shared by blocks that run side by side),
			// and a counted trial left out would be in samples.jsonl and
			// the cell's values but neither in its stop's n nor in the
			// machine time spent. A cell the run gave up runs no
			// more trials, whatever the plan lists: each would make
			// every attempt again and could count a trial of a cell
			// stops.json calls failed.
			planned := in[cellID(u.cell)] && r.cellLog(u.cell).failed == ""
			if planned || r.done[trialKey{u.cell, round}] {
				todo = append(todo, job{u, g})
			}
		}
	}
	return todo, nil
}

// runJobs runs one round's trials, skipping those an interrupted run
// measured. A trial whose attempt the noise guard found disturbed
// (errAgain) runs again after the round's other trials, a burst of
// other work having had their time to pass, and still in its round, so
// it stays paired with the round's trials of the other cells.
func (r *run) runJobs(jobs []job, round int, run func(u unit, round int) (time.Duration, error)) error {
	var again []job
	try := func(j job) error {
		d, err := run(j.u, round)
		j.g.spent += d
		if errors.Is(err, errAgain) {
			again = append(again, j)
			return nil
		}
		return err
	}
	for _, j := range jobs {
		k := trialKey{j.u.cell, round}
		// The interrupted run's attempts at this trial: their machine
		// time counts as the group's, as it did in that run.
		j.g.spent += r.replay(k)
		if r.done[k] {
			continue // measured before the run was resumed
		}
		if err := try(j); err != nil {
			return err
		}
	}
	for len(again) > 0 {
		jobs, again = again, nil
		for _, j := range jobs {
			if err := try(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishBlock records the controller's last word on a finished block.
func (r *run) finishBlock(b *blockRun) error {
	r.blocksDone++
	// A fixed design records its cells' stops too when it has a target
	// (the report says whether the count met it), a budget or cells to
	// compare (the run's end lists the decisions).
	if r.study.RecordsStops() {
		return r.recordStops(b.groups, b.last)
	}
	return nil
}

// groupBudget is what each of a block's groups may spend, the
// controller's budget (a function that is 0 for every group: none): what
// is left of the run's budget, split over the datapath and replica-count
// blocks still to run (this one and those after it, blockUnits) and
// their groups in proportion to the trials their minimum takes
// (minimumLeft: trials.min in each cell, a held cell's hold, and as
// many in the baseline that runs beside it). Blocks alike (no holds, as
// many cells) get even shares; a block with held cells needs about
// twice the trials of one without, and its even share stopped them
// before their hold (rps-rfs --quick on 2 cores: a minimum of 30 trials
// at 1 pair and 15 at 4; an even half of its budget paid for about 24
// of 5.5 s at 1 pair, and the 4-pair block's surplus came after the
// 1-pair block had stopped them). What a block leaves
// unspent goes to the blocks after it. The minimum is counted whole,
// trials run or not, cells stopped or not: a block's share is then the
// same in a resumed run as in the run it resumes. ok is false when the
// budget is spent before the block (budgetSpent). In a run of blocks
// side by side the share is replaced before each round (sharedBudget):
// there only ok counts.
func (r *run) groupBudget(groups []*group) (share func(*group) time.Duration, ok bool) {
	if r.design.budget <= 0 {
		return func(*group) time.Duration { return 0 }, true
	}
	all := r.blockUnits()
	blocks := len(all) - r.blocksDone
	left := r.design.budget - r.spent()
	if left <= 0 || blocks <= 0 {
		return nil, false
	}
	var rest []unit
	for _, us := range all[r.blocksDone:] {
		rest = append(rest, us...)
	}
	need, _ := r.minimumLeft(rest, false)
	of := make(map[results.Cell]int, len(rest))
	total := 0
	for i, u := range rest {
		of[u.cell] = need[i]
		total += need[i]
	}
	weight := make(map[*group]int, len(groups))
	for _, g := range groups {
		for _, u := range g.units {
			weight[g] += of[u.cell]
		}
	}
	return func(g *group) time.Duration {
		if weight[g] == 0 || total == 0 {
			// Not among the blocks still to run (cannot happen in a run
			// of one datapath): the even share.
			return left / time.Duration(blocks*max(len(groups), 1))
		}
		return time.Duration(float64(left) * float64(weight[g]) / float64(total))
	}, true
}

// notMeasured is why the cells of a block the budget did not reach have
// no trials.
const notMeasured = "budget spent before this block"

// budgetSpent records the cells of a block that starts with the budget
// spent as not measured, and says so. It runs none of their trials:
// running even their minimum would overspend the budget the user set,
// and a block of cells with no trials then looks like a result; a warning
// and the report's "not measured" say what happened instead.
func (r *run) budgetSpent(units []unit, groups []*group) error {
	r.blocksDone++
	r.opt.Progress.Logf("warning: %s: %s (%s of %s used); its %d cells are not measured",
		blockName(units), notMeasured, r.spent().Round(time.Second), r.design.budget, len(units))
	for _, g := range groups {
		for _, u := range g.units {
			r.stops = append(r.stops, results.Stop{Cell: u.cell, Metric: g.metric, Status: string(adaptive.Budget),
				Of: study.OfMean, Reason: notMeasured, Failed: notMeasured})
		}
	}
	return r.writeStops()
}

// spent is the machine time of the run so far, over every attempt of
// this process and the trials of an interrupted run it resumes.
func (r *run) spent() time.Duration { return time.Since(r.began) + r.prior }

// budgetEnd is when the budget runs out if the interrupted run's trials
// (a resumed run replays their machine time as it reaches them) are
// counted now; zero without a budget.
func (r *run) budgetEnd() time.Time {
	b := r.study.Spec.Budget.Duration
	if b <= 0 {
		return time.Time{}
	}
	return r.began.Add(b - r.prior - r.unreplayed())
}

// unreplayed is the machine time of the interrupted run's attempts that
// a resumed run has not replayed yet (replay counts it in prior).
func (r *run) unreplayed() time.Duration {
	var sum time.Duration
	for _, p := range r.prev {
		sum += p.cost
	}
	return sum
}

// recordStops adds the controller's last word on the block's cells to
// stops.json.
func (r *run) recordStops(groups []*group, plans []adaptive.Plan) error {
	for gi, g := range groups {
		byID := map[string]adaptive.CellPlan{}
		for _, cp := range plans[gi].Cells {
			byID[cp.ID] = cp
		}
		for _, u := range g.units {
			st := stopOf(u.cell, g.metric, byID[cellID(u.cell)], r.design, r.cellLog(u.cell))
			if st.Decision != "" {
				st.Versus = r.versusName(u.cell)
			}
			r.stops = append(r.stops, st)
		}
	}
	return r.writeStops()
}

// maxToDecide bounds the trials a stop's estimate looks at: beyond it a
// cell is called out of reach.
const maxToDecide = 1000

func stopOf(c results.Cell, metric string, p adaptive.CellPlan, d design, l *cellLog) results.Stop {
	st := results.Stop{Cell: c, Metric: metric, Status: string(p.Status), N: p.N, Valid: p.Valid,
		Reason: p.Reason, Failed: l.failed, Of: study.OfMean, Held: p.HeldTo}
	cfg := d.config(metric, 0)
	if cfg.Precision != nil {
		st.Target, st.Of = cfg.Precision.HalfWidth, string(cfg.Precision.Of)
	}
	if !math.IsNaN(p.HalfWidth) {
		st.HalfWidth = ptr(p.HalfWidth)
	}
	st.TrialSeconds = l.meanWall().Seconds()
	if p.Comparison != nil {
		st.Decision, st.DecisionReason = string(p.Decision.Verdict), p.Decision.Reason
		ci, conf := p.Comparison.Chosen, 0.95
		if p.Sequential != nil {
			ci, conf, st.Look = p.Sequential.Chosen, adaptive.DecisionConfidence(cfg.Trials), p.Look
		}
		// A cell whose baseline was given up is not to be decided by
		// more trials of it: the baseline is what broke.
		if st.VersusFailed = p.BaselineFailed; st.VersusFailed == "" {
			st.ToDecide = adaptive.TrialsToDecide(cfg, p, maxToDecide)
		}
		st.Method, st.Confidence = string(ci.Method), conf
		for _, v := range []struct {
			dst **float64
			x   float64
		}{{&st.Ratio, ci.Ratio}, {&st.Low, ci.Low}, {&st.High, ci.High}} {
			if !math.IsNaN(v.x) && !math.IsInf(v.x, 0) {
				*v.dst = ptr(v.x)
			}
		}
	}
	return st
}

func ptr(v float64) *float64 { return &v }

// trialKey is one trial of one cell.
type trialKey struct {
	cell  results.Cell
	trial int
}

// writeStops writes stops.json in the study's cell order: blocks of a run
// of several datapaths finish in whatever round they are decided
// (interleave.go), and the report's repetitions table lists the stops as
// stored.
func (r *run) writeStops() error {
	order := map[results.Cell]int{}
	for i, c := range r.study.Cells() {
		order[c] = i
	}
	sort.SliceStable(r.stops, func(i, j int) bool { return order[r.stops[i].Cell] < order[r.stops[j].Cell] })
	// What the budget paid so far, for the report's word on a budget
	// that ran out (what a trial really cost, set-ups included).
	r.env.MachineS = r.spent().Seconds()
	// Not before the environment is recorded (writeEnv, or a resumed
	// run's): a run whose every cluster's set-up was lost has none, and
	// an env.json of nothing else would read as another build's.
	if r.env.Tool != "" {
		if err := r.out.WriteEnv(r.env); err != nil {
			return err
		}
	}
	return r.out.WriteStops(r.stops)
}
