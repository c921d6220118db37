package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
)

// setUpAttempts is how many times the run sets up what cells run on (a
// datapath's cluster and knobs, cells.go upDatapath; a replica count's
// pods, pod knobs and counters, atReplicas) before it gives those cells
// up and goes on. Twice: what fails a set-up for a passing reason (a
// namespace the kernel was still destroying, an API call that timed
// out, a pod slow to come up) is rarely met again a moment later, while
// a set-up that fails for good (a datapath this kernel cannot build
// despite its probe, more pods than the machine can take) fails every
// attempt, each costing a whole set-up, the teardown of what it made
// and, on the local engine, the wait for the kernel to destroy it. A
// trial gets more retries (study.MaxRetries): it is cheap beside a set-up.
const setUpAttempts = 2

// remoteSetUpPause is how long a run on remote nodes (a cluster) waits
// before a set-up's second attempt: what fails there for a passing
// reason lasts longer than on one machine (a kubelet retries a failed
// image pull after 10 s, then 20 s, doubling up to 5 minutes; an API
// server restarting, a node's network flapping), and 30 s covers its
// first two retries, beside a cluster set-up of agents, a Lease and
// pods that takes as long. The local engine tries again at once: its
// passing failures (a namespace the kernel was still destroying) have
// passed by then. A variable for the tests.
var remoteSetUpPause = 30 * time.Second

// setUpError is a failed set-up after which everything it made was
// undone: its knobs reverted, its cluster torn down. Only such a
// failure is tried again, and then given up with the cells it was for.
// Every other failure of a set-up ends the run as before: a cancelled
// run, a knob that would not revert, a teardown that failed (engine
// ErrLeftBehind included: an engine's own teardown of a failed Up; a
// trial's error that carries it ends the run too, leftByTrial), a
// write that failed (env.json, a journal record), a refused resume, a
// node another run holds (isFatal). So does a setUpError once the run's
// journal has failed (retrySetUp): the engine's first failed journal
// write is a set-up's error like any other, but the journal stays
// failed (journal.ErrFailed), so every later set-up would fail on it
// too and each would be given up with its cells.
type setUpError struct{ err error }

func (e *setUpError) Error() string { return e.err.Error() }
func (e *setUpError) Unwrap() error { return e.err }

// setUpFailed marks err, a set-up's failure after which what it made was
// undone, as one the run may retry and give up (setUpError); one that
// says the engine left something behind stays as it is.
func setUpFailed(err error) error {
	if errors.Is(err, engine.ErrLeftBehind) {
		return err
	}
	return &setUpError{err}
}

// setUpLost is a set-up given up: how many attempts it had and the last
// one's error.
type setUpLost struct {
	attempts int
	last     string
}

// retrySetUp runs setUp until it succeeds, at most setUpAttempts times
// (on remote nodes remoteSetUpPause apart): lost is nil when it did, else
// the failure whose cells the caller gives up (lostTo); err ends the run
// (a failure no setUpError, or one while the run is being cancelled, or
// isFatal's, or any once the journal has failed). A last attempt that
// failed for the nodes' passing state (engine.ErrTransient: a kube agent
// not ready yet or its image not pulled yet, agents mid-rollout) ends
// the run too rather than give the cells up: giving up is final (a
// --resume keeps them given up), while the error tells the user to run
// again once the state has passed, which --resume then does. So does
// every last failure when giveUp is false: the set-up of a study's only
// datapath (every kube run's), whose cells are all the run's. Given up,
// they left a run that measured nothing (exit 1, no --resume offered),
// or a resumed one that ended as finished (exit 0), every cell still to
// run given up for good by a failure that may have passed; ended, the
// run says the error, exit 1, and how to continue it. what names the
// set-up in the warnings.
func (r *run) retrySetUp(ctx context.Context, what string, giveUp bool, setUp func() error) (lost *setUpLost, err error) {
	for attempt := 1; ; attempt++ {
		err := setUp()
		if err == nil {
			return nil, nil
		}
		su, ok := err.(*setUpError)
		if !ok || ctx.Err() != nil || isFatal(err) || r.journalFailed() {
			return nil, err
		}
		if attempt < setUpAttempts {
			if !r.plan.remote {
				r.opt.Progress.Logf("warning: %s: set-up attempt %d failed: %v; trying again", what, attempt, su.err)
				continue
			}
			r.opt.Progress.Logf("warning: %s: set-up attempt %d failed: %v; trying again in %v", what, attempt, su.err, remoteSetUpPause)
			if !sleepUntil(time.Now().Add(remoteSetUpPause), ctx.Done()) {
				return nil, ctx.Err()
			}
			continue
		}
		if errors.Is(err, engine.ErrTransient) {
			return nil, err
		}
		if !giveUp {
			return nil, fmt.Errorf("%s: set-up failed %d attempts, and the study has no other datapath to measure: %w", what, attempt, su.err)
		}
		r.opt.Progress.Logf("warning: %s: set-up failed %d attempts (last: %v); giving up the cells it was for, the run goes on",
			what, attempt, su.err)
		return &setUpLost{attempts: attempt, last: su.err.Error()}, nil
	}
}

// journalFailed says whether a write to the run's journal failed (tests
// run without one): the journal stays failed, so nothing more may be
// set up.
func (r *run) journalFailed() bool { return r.journal != nil && r.journal.Err() != nil }

// lostTo stands in for a trial of a cell whose set-up was lost: it
// gives the cell up at that trial (giveUpAtSetUp) and runs nothing.
// Given to block or runJobs, it gives up the cells the controller
// still runs, at the round they were to run, as a trial that failed
// every attempt does: a cell the controller had stopped keeps its stop,
// a trial an interrupted run counted is replayed, and an adaptive
// design's controller stops the given-up cells as failed.
func (r *run) lostTo(l setUpLost) func(u unit, round int) (time.Duration, error) {
	return func(u unit, round int) (time.Duration, error) {
		return 0, r.giveUpAtSetUp(u.cell, round, l)
	}
}

// giveUpAtSetUp records cell given up at trial round because its set-up
// was lost: one attempt record (results.SetUpFailed) with the why as its
// error, which the report lists, a resumed run keeps, and analysis and
// compare read as a given-up cell; the cell runs no more trials.
func (r *run) giveUpAtSetUp(cell results.Cell, round int, l setUpLost) error {
	_, _, attempt := r.attemptsBefore(trialKey{cell, round})
	why := results.GaveUpAtSetUp(round, l.attempts, l.last)
	now := time.Now()
	rec := results.Sample{Cell: cell, Trial: round, Attempt: attempt, Start: now, End: now,
		Metrics: map[string]float64{}, Error: why, Discarded: results.SetUpFailed, Part: r.part}
	if err := r.out.AppendSample(rec); err != nil {
		return err
	}
	cl := r.cellLog(cell)
	cl.failed = why
	cl.record(round, math.NaN(), r.part)
	return nil
}
