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
// trials of several seconds each. The controller is the same: each
// (datapath, replica count) block plans its rounds as it would alone.
func (r *run) interleaved(ctx context.Context) error {
	s := r.study
	blocks := map[blockKey]*blockRun{}
	for _, d := range s.Spec.Datapaths {
		for _, reps := range s.Spec.Replicas {
			b, err := r.startBlock(r.cellsOf(d.Name, reps))
			if err != nil {
				return err
			}
			if b != nil {
				blocks[blockKey{d.Name, reps}] = b
			}
		}
	}
	for round := 1; len(blocks) > 0; round++ {
		for _, d := range s.Spec.Datapaths {
			if err := ctx.Err(); err != nil {
				return err
			}
			plans := map[int][]job{}
			for _, reps := range s.Spec.Replicas {
				k := blockKey{d.Name, reps}
				b := blocks[k]
				if b == nil {
					continue
				}
				if r.design.budget > 0 {
					share := r.sharedBudget(blocks)
					b.allowance = func(g *group) time.Duration { return g.spent + share }
				}
				jobs, err := r.planBlock(b, round)
				if err != nil {
					return err
				}
				if len(jobs) == 0 {
					delete(blocks, k)
					if err := r.finishBlock(b); err != nil {
						return err
					}
					continue
				}
				plans[reps] = jobs
			}
			if len(plans) == 0 {
				continue
			}
			if err := r.roundOn(ctx, d, round, plans); err != nil {
				return err
			}
		}
	}
	return nil
}

// blockKey names a block: a datapath at a replica count.
type blockKey struct {
	dp   string
	reps int
}

// sharedBudget is, in a run whose blocks run side by side, what each
// group may spend beyond what it has spent: an even share of what is left of
// the budget over the groups of the blocks still running. What a
// finished block did not use goes to the others, as it goes to the
// blocks after it in a run of one datapath.
func (r *run) sharedBudget(running map[blockKey]*blockRun) time.Duration {
	groups := 0
	for _, o := range running {
		groups += len(o.groups)
	}
	left := max(r.design.budget-r.spent(), 0)
	return left / time.Duration(max(groups, 1))
}

// roundOn runs one round's planned trials of one datapath (jobs per
// replica count) on a cluster built for them. A round whose trials an
// interrupted run measured builds nothing: it only replays them.
func (r *run) roundOn(ctx context.Context, d study.Datapath, round int, plans map[int][]job) error {
	measure := false
	for _, jobs := range plans {
		for _, j := range jobs {
			measure = measure || !r.done[trialKey{j.u.cell, round}]
		}
	}
	if !measure {
		for _, jobs := range plans {
			if err := r.runJobs(jobs, round, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return r.upDatapath(ctx, d, func(c engine.Cluster, tgt *knob.Target) error {
		for _, reps := range r.study.Spec.Replicas {
			jobs := plans[reps]
			if len(jobs) == 0 {
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
					err := r.runUnit(ctx, c, onPods[u.cell], round, tgt)
					return time.Since(t0), err
				})
			})
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		return nil
	})
}
