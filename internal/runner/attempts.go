package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// minPause is the shortest pause before a trial: long enough to measure
// how busy the machine was just before it.
const minPause = 250 * time.Millisecond

// fatalError is a failure after which the run must not go on: a knob
// that could not be reverted, or a sample that could not be written.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// isFatal: err stops the run. A cluster node that another run's agent
// session is changing (tune.ErrNodeBusy), or that holds a dead session's
// changes its agent could not put back (tune.ErrNodeUnclean), stops it too: every later
// trial's knob would be refused the same way, and retrying each then
// giving its cell up would spend the run telling the user so cell by
// cell instead of once. So does a journal that failed earlier
// (journal.ErrFailed): it stays failed, and every change after it would
// be refused.
func isFatal(err error) bool {
	var f *fatalError
	return errors.As(err, &f) || errors.Is(err, tune.ErrNodeBusy) || errors.Is(err, tune.ErrNodeUnclean) ||
		errors.Is(err, journal.ErrFailed)
}

// errAgain is runUnit's answer for an attempt the noise guard found
// disturbed while repeats are left: runJobs runs the trial again after
// the round's other trials. Steal on a shared machine comes in bursts of
// a minute or more: on 2026-12-04 an immediate repeat was disturbed
// again in 13 of 14 cases (rps-rfs and workloads quick profiles), while
// the next round's trials were quiet. A round of one cell has no other
// trials: its repeat waits for a quiet machine instead (quiet.go).
var errAgain = errors.New("disturbed: to run again after the round's other trials")

// attemptsSoFar is where a trial's attempts go on: its failures and
// repeats so far (the retry and repeat limits count on them) and the
// next attempt's number; for a disturbed trial run again, the bounds its
// attempt crossed and the count of attempts the run had started then
// (beforeRepeat waits for a quiet machine, or a cluster's quiet nodes,
// when none started since).
type attemptsSoFar struct {
	failures, repeats, next int
	bar                     quietBar
	at                      int
}

// runUnit runs trial round of one cell: the pause, then attempts until
// one is counted. A failed attempt is recorded with its error and run
// again, up to study.MaxRetries times; after that the cell is given up
// (listed in the report with the error) and the run goes on. An attempt
// the noise guard finds disturbed is recorded, marked, and repeated up
// to the guard's Repeats, each time after the round's other trials
// (errAgain); the last one counts, marked if disturbed. A cancelled run,
// a knob that would not revert and a write that failed end the run, as
// does a failure that left something of the engine's behind, recorded
// and counted toward the retry bound first (leftByTrial).
func (r *run) runUnit(ctx context.Context, c engine.Cluster, u unit, round int, tgt *knob.Target) error {
	s, cell, l := r.study, u.cell, r.cellLog(u.cell)
	guard := s.Spec.NoiseGuard()
	where := fmt.Sprintf("%s/%s/%s/%d replicas%s, trial %d", cell.Datapath, cell.Tuning, cell.Workload, cell.Replicas, impairedBy(cell, "/"), round)
	if err := r.beforeRepeat(ctx, c, where, r.again[trialKey{cell, round}]); err != nil {
		return err
	}
	failures, repeats, first := r.attemptsBefore(trialKey{cell, round})
	for attempt := first; ; attempt++ {
		r.attemptsRun++
		busy, err := r.pause(ctx)
		if err != nil {
			return err
		}
		t0 := time.Now()
		sample, err := r.trial(ctx, c, cell, round, u.tuning, u.work, u.pl, tgt)
		if err != nil {
			if ctx.Err() != nil || isFatal(err) {
				return fmt.Errorf("%s: %w", where, err)
			}
			failures++
			rec := results.Sample{Cell: cell, Trial: round, Attempt: attempt, Start: t0, End: time.Now(),
				Metrics: map[string]float64{}, Error: err.Error(), Discarded: "failed", Part: r.part}
			if err := r.out.AppendSample(rec); err != nil {
				return err
			}
			gaveUp := failures > study.MaxRetries
			if gaveUp {
				l.failed = results.GaveUp(round, failures, err.Error())
				l.record(round, math.NaN(), r.part)
			}
			if errors.Is(err, engine.ErrLeftBehind) {
				return r.leftByTrial(where, err, failures, gaveUp)
			}
			r.opt.Progress.Logf("warning: %s attempt %d failed: %v", where, attempt, err)
			if !gaveUp {
				continue
			}
			r.opt.Progress.Logf("warning: %s: giving the cell up: %s", cellID(cell), l.failed)
			return nil
		}
		sample.Attempt, sample.Part = attempt, r.part
		sample.Noise.BusyBeforePct = busy
		rt := roundTrips(u.work)
		sample.Noise.Disturbed = disturbed(*sample.Noise, guard, rt)
		if d := sample.Noise.Disturbed; d != "" && repeats < guard.Repeats {
			repeats++
			sample.Discarded = "disturbed, repeated: " + d
			if err := r.out.AppendSample(sample); err != nil {
				return err
			}
			r.opt.Progress.Logf("note: %s attempt %d disturbed (%s); repeating it at the end of its round", where, attempt, d)
			if r.again == nil {
				r.again = map[trialKey]attemptsSoFar{}
			}
			r.again[trialKey{cell, round}] = attemptsSoFar{failures, repeats, attempt + 1, barOf(*sample.Noise, guard, rt), r.attemptsRun}
			return errAgain
		}
		if err := r.store(sample, u.tuning); err != nil {
			return err
		}
		l.record(round, valueOf(sample, r.metricOf(u.work)), r.part)
		l.wall = append(l.wall, time.Since(t0)+r.lastPause)
		r.overhead += time.Since(t0) - s.Spec.Duration.Duration
		r.trialsRun++
		r.opt.Progress.Step(fmt.Sprintf("%s %s %s r=%d%s trial %d (max %d)", cell.Datapath, cell.Workload, cell.Tuning, cell.Replicas, impairedBy(cell, " "), round, s.Spec.Trials.Max))
		return nil
	}
}

// leftByTrial is the run's error for a trial whose failure did not undo
// all it made (engine.ErrLeftBehind: a pod of a start-up burst it could
// not delete, or whose failed wiring it could not undo). Run again on
// this cluster, the trial, and every later trial of the workload, would
// make its pods beside what stayed, under the same names and at the
// same addresses: each fails on it, or measures beside it. So the run
// stops, as after a set-up that left something (setUpFailed), and its
// teardown follows as after any error (knobs reverted, the cluster torn
// down, which deletes what the trial left when it can). runUnit has
// recorded the attempt as failed first, so the retry bound holds over
// resumes: a leftover that recurs at every attempt (a datapath's
// DetachPod or a CNI DEL that always fails for the burst's pods) gives
// the cell up after study.MaxRetries+1 of them, as any failing trial
// does, and a --resume goes on with the other cells (the last one ends
// the run too: what it left stays until the teardown); unrecorded,
// every --resume ran it again and ended there. failures counts the
// trial's failed attempts, this one included.
//
// Whether anything remains after the teardown is known only once it
// has run: the error says the teardown removes what it can, and that
// the cleanup command removes the rest if any remains, which the run's
// journal, kept then, says in the same error (closeJournal). gaveUp:
// runUnit gave the cell up at this attempt.
func (r *run) leftByTrial(where string, err error, failures int, gaveUp bool) error {
	next := fmt.Sprintf("a --resume runs the trial again (%d of its attempts failed; its cell is given up after %d)",
		failures, study.MaxRetries+1)
	if gaveUp {
		next = fmt.Sprintf("%d of the trial's attempts failed, so its cell is given up, and a --resume goes on with the other cells", failures)
	}
	return fmt.Errorf("%s: %w; the run ends here rather than run more trials beside what this failure did not undo: "+
		"its teardown removes what it can with the cluster, and if anything remains, the journal is kept and %s removes the rest; %s",
		where, err, journalCleanup(r.opt.Cleanup, r.jdir), next)
}

// runTrial runs trial round of cell u on cluster c: runUnit, or the
// fake a test gave (unitRun).
func (r *run) runTrial(ctx context.Context, c engine.Cluster, u unit, round int, tgt *knob.Target) error {
	if r.unitRun != nil {
		return r.unitRun(ctx, c, u, round, tgt)
	}
	return r.runUnit(ctx, c, u, round, tgt)
}

// impairedBy is the cell's impairment after sep, for the lines that name
// a cell: the cells of a study's impairments differ by it alone.
func impairedBy(c results.Cell, sep string) string {
	if c.Impairment == "" {
		return ""
	}
	return sep + c.Impairment
}

func valueOf(s results.Sample, metric string) float64 {
	if v, ok := s.Metrics[metric]; ok {
		return v
	}
	return math.NaN()
}

// disturbed names the noise guard thresholds a trial crossed, "" for
// none; rt marks a workload whose rate is set by round trips, held to
// the guard's stricter outside-CPU bound (study.Noise.OutsideLimit).
func disturbed(n results.Noise, g study.Noise, rt bool) string {
	var why []string
	crossed := barOf(n, g, rt)
	if crossed.steal > 0 {
		steal, node := n.Steal()
		on := ""
		if node != "" {
			on = " on the " + node + " node"
		}
		why = append(why, fmt.Sprintf("steal %.1f%%%s > %g%%", steal, on, crossed.steal))
	}
	if crossed.outside > 0 {
		what := ""
		if rt {
			what = " (round trips: outside work keeps cores awake and shortens them)"
		}
		why = append(why, fmt.Sprintf("CPU of processes outside the run %.1f%% > %g%%%s", *n.OutsidePct, crossed.outside, what))
	}
	if windowShort(n, g) {
		slowest := ""
		if n.WindowSlowest != "" {
			slowest = "; slowest: " + n.WindowSlowest
		}
		why = append(why, fmt.Sprintf("the collectors recorded %.0f%% of the measured window < %g%% (the last started %.1f s after the warm-up%s)",
			*n.WindowPct, g.WindowLimit(), n.WindowLateS, slowest))
	}
	return strings.Join(why, "; ")
}

// windowShort: the collectors recorded less of the measured window than
// the guard's bound (they started late), so the trial is disturbed and
// its counters cover only part of what the workload did.
func windowShort(n results.Noise, g study.Noise) bool {
	return n.WindowPct != nil && *n.WindowPct < g.WindowLimit()
}

// roundTrips says whether w's tool sets its rate by round trips
// (spec.Tool.RoundTrips).
func roundTrips(w study.Workload) bool {
	t, ok := registry.Describe(w.Tool)
	return ok && t.RoundTrips
}

// stealPct is the mean steal time over the machine's cores online at
// the window's end (metrics.Window.Online: an offline one reads 0).
func stealPct(cores []results.CoreStat) float64 {
	if len(cores) == 0 {
		return 0
	}
	var sum float64
	for _, c := range cores {
		sum += c.Steal
	}
	return sum / float64(len(cores))
}

// pauseTime is the pause before each trial: the study's cooldown, at
// least minPause.
func (r *run) pauseTime() time.Duration { return max(r.study.Spec.Cooldown.Duration, minPause) }

// pause waits the study's cooldown (at least minPause) before a trial
// and, on the local engine, measures how busy this machine was meanwhile
// (nil on a cluster, whose nodes are other machines).
func (r *run) pause(ctx context.Context) (*float64, error) {
	d := r.pauseTime()
	r.lastPause = d
	var before procfs.CPUStat
	fs, err := procfs.NewDefaultFS()
	local := err == nil && !r.plan.remote
	if local {
		st, err := fs.Stat()
		local = err == nil
		before = st.CPUTotal
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(d):
	}
	if !local {
		return nil, nil
	}
	st, err := fs.Stat()
	if err != nil {
		return nil, nil
	}
	busy := busyPct(before, st.CPUTotal)
	return busy, nil
}

// busyPct is the share of CPU time not idle between two readings of
// /proc/stat's cpu line; nil when no time passed.
func busyPct(a, b procfs.CPUStat) *float64 {
	dt := cpuTotal(b) - cpuTotal(a)
	if dt <= 0 {
		return nil
	}
	idle := (b.Idle + b.Iowait) - (a.Idle + a.Iowait)
	// The readings are seconds in floating point: a machine idle the
	// whole time can come out a hair below 0.
	v := min(100, max(0, 100*(1-idle/dt)))
	return &v
}

// cpuTotal is all the CPU time of /proc/stat's cpu line, in seconds.
func cpuTotal(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
}
