package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// interleaved runs a study of several datapaths in shared rounds: round
// k of every datapath before round k+1 of any, each datapath's cluster
// built for its trials of the round and torn down after them. Why: a
// datapath measured after another one, an hour later on a shared
// machine, differs from it by the machine's drift too (a host's single
// TCP flow gave 12 Gbit/s one morning and 20 two hours later); in shared
// rounds trial k of two datapaths is a pair, and the comparison with the
// first datapath is paired like a tuning's with its baseline
// (analysis.SharedRounds checks the rounds on the samples' times). The
// cost is one cluster set-up per datapath and round: 1.8 s on 2 cores,
// the kernel's namespace teardown wait included, against a round's
// trials of several seconds each.
func (r *run) interleaved(ctx context.Context) error {
	return r.sharedRounds(ctx, r.roundOn)
}

// roundFunc runs one round's planned trials of one datapath, jobs per
// replica count (roundOn; tests give a fake).
type roundFunc func(ctx context.Context, d study.Datapath, round int, plans map[int][]job) error

// sharedRounds plans each round over every block, then runs the
// round's trials datapath by datapath (on). A block is one datapath at
// one replica count, planned as it would be alone; in an adaptive study
// that compares its datapaths (vsFirstDatapath) a block is one replica
// count across the datapaths, so that a cell stops once its comparison
// with the first datapath is decided and the first datapath's cells run
// as long as any cell compared with them.
func (r *run) sharedRounds(ctx context.Context, on roundFunc) error {
	blocks, err := r.startShared()
	if err != nil {
		return err
	}
	for round := 1; len(blocks) > 0; round++ {
		if err := r.beforeRound(); err != nil {
			return err
		}
		var plans map[string]map[int][]job
		plans, blocks, err = r.planShared(blocks, round)
		if err != nil {
			return err
		}
		for _, d := range r.study.Spec.Datapaths {
			if err := ctx.Err(); err != nil {
				return err
			}
			if p := plans[d.Name]; len(p) > 0 {
				if err := on(ctx, d, round, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// startShared starts the run's blocks, in the study's order.
func (r *run) startShared() ([]*blockRun, error) {
	var blocks []*blockRun
	for _, u := range r.blockUnits() {
		b, err := r.startBlock(u)
		if err != nil {
			return nil, err
		}
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// blockUnits are the run's blocks' cells: per replica count, one block
// per datapath, or one across the datapaths in a study that compares
// them (vsFirstDatapath: a cell is planned with the first datapath's).
func (r *run) blockUnits() [][]unit {
	s := r.study.Spec
	var out [][]unit
	for _, reps := range s.Replicas {
		if r.design.versus == vsFirstDatapath {
			var all []unit
			for _, d := range s.Datapaths {
				all = append(all, r.cellsOf(d.Name, reps)...)
			}
			if len(all) > 0 { // spec.only may select none here
				out = append(out, all)
			}
			continue
		}
		for _, d := range s.Datapaths {
			if us := r.cellsOf(d.Name, reps); len(us) > 0 {
				out = append(out, us)
			}
		}
	}
	return out
}

// planShared plans one round of every running block: the round's jobs
// by datapath and replica count, and the blocks still running (a block
// with no job is finished and recorded). Every block is planned from the
// rounds before this one, so the order of planning does not matter. With
// a budget, what is left of it is shared, before the round, by the groups
// that would run in it were there no budget (sharedBudget): a block that
// finishes in this round on its own (its cells decided) takes no share,
// which would leave the others' too small for a trial they could pay.
func (r *run) planShared(blocks []*blockRun, round int) (map[string]map[int][]job, []*blockRun, error) {
	if r.design.budget > 0 {
		share, err := r.sharedBudget(blocks, round)
		if err != nil {
			return nil, nil, err
		}
		for _, b := range blocks {
			b.allowance = func(g *group) time.Duration { return g.spent + share }
		}
	}
	plans := map[string]map[int][]job{}
	var running []*blockRun
	for _, b := range blocks {
		jobs, err := r.planBlock(b, round)
		if err != nil {
			return nil, nil, err
		}
		if len(jobs) == 0 {
			if err := r.finishBlock(b); err != nil {
				return nil, nil, err
			}
			continue
		}
		running = append(running, b)
		for _, j := range jobs {
			c := j.u.cell
			if plans[c.Datapath] == nil {
				plans[c.Datapath] = map[int][]job{}
			}
			plans[c.Datapath][c.Replicas] = append(plans[c.Datapath][c.Replicas], j)
		}
	}
	return plans, running, nil
}

// blockCount is the number of blocks the run has (blockUnits).
func (r *run) blockCount() int { return len(r.blockUnits()) }

// blockName names a block in messages.
func blockName(units []unit) string {
	c := units[0].cell
	for _, u := range units {
		if u.cell.Datapath != c.Datapath {
			return fmt.Sprintf("every datapath at %d replicas", c.Replicas)
		}
	}
	return fmt.Sprintf("%s at %d replicas", c.Datapath, c.Replicas)
}

// sharedBudget is, in a run whose blocks run side by side, what each
// group may spend beyond what it has spent in round: an even share of
// what is left of the budget over the groups that would run a trial in
// it without a budget (planned so first: planning changes nothing but
// the block's last plans, which the planning with the share replaces).
// What a finished block did not use goes to the others, as it goes to
// the blocks after it in a run of one datapath.
func (r *run) sharedBudget(blocks []*blockRun, round int) (time.Duration, error) {
	wanting := map[*group]bool{}
	for _, b := range blocks {
		b.allowance = func(*group) time.Duration { return 0 } // no budget
		jobs, err := r.planBlock(b, round)
		if err != nil {
			return 0, err
		}
		for _, j := range jobs {
			wanting[j.g] = true
		}
	}
	left := max(r.design.budget-r.spent(), 0)
	return left / time.Duration(max(len(wanting), 1)), nil
}

// roundOn runs one round's planned trials of one datapath (jobs per
// replica count) on a cluster built for them. A round whose trials an
// interrupted run measured (or gave up, at their set-up too) builds
// nothing: it only replays them; so does a replica count's in a round
// that builds the cluster for another count's (its pods are not set
// up, to fail again as they did). A
// cluster that could not be set up gives up the datapath's cells of the
// round (from then on the controller runs them no more), a replica
// count whose pods could not be set up that count's (lostTo); the
// round goes on with the other replica counts and datapaths.
func (r *run) roundOn(ctx context.Context, d study.Datapath, round int, plans map[int][]job) error {
	measured := func(jobs []job) bool {
		for _, j := range jobs {
			if !r.done[trialKey{j.u.cell, round}] {
				return false
			}
		}
		return true
	}
	measure := false
	for _, jobs := range plans {
		measure = measure || !measured(jobs)
	}
	if !measure {
		for _, jobs := range plans {
			if err := r.runJobs(jobs, round, nil); err != nil {
				return err
			}
		}
		return nil
	}
	lost := func(reps ...int) func(setUpLost) error {
		return func(l setUpLost) error {
			for _, n := range reps {
				if err := r.runJobs(plans[n], round, r.lostTo(l)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return r.upDatapath(ctx, d, func(c engine.Cluster, tgt *knob.Target) error {
		for _, reps := range r.study.Spec.Replicas {
			jobs := plans[reps]
			if len(jobs) == 0 {
				continue
			}
			if measured(jobs) {
				if err := r.runJobs(jobs, round, nil); err != nil {
					return err
				}
				continue
			}
			err := r.atReplicas(ctx, c, reps, tgt, func() error {
				units, err := r.cellsAt(reps, tgt)
				if err != nil {
					return err
				}
				onPods := map[results.Cell]unit{}
				for _, u := range units {
					onPods[u.cell] = u
				}
				return r.runJobs(jobs, round, func(u unit, round int) (time.Duration, error) {
					t0 := time.Now()
					err := r.runTrial(ctx, c, onPods[u.cell], round, tgt)
					return time.Since(t0), err
				})
			}, lost(reps))
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		return nil
	}, lost(r.study.Spec.Replicas...))
}
