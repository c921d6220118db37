package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/metrics/outside"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A trial the noise guard found disturbed runs again after its round's
// other trials (errAgain), a burst of steal or outside work having had
// their time to pass. In a round of one cell (a study of one cell, or the
// last cell an adaptive run keeps going) there are no other trials: the
// repeat would start at once, inside the same burst. Before such a
// repeat the runner waits, a bounded time, for one second of the machine
// below the bounds the attempt crossed: this machine's (machineMeter), or
// on a cluster its nodes', read through their kernels' CPU samplers (the
// kube engine's agents, nodesMeter).

// quietBar is what one second of the machine must stay at or below before
// a disturbed trial runs again right after itself: the noise guard's
// bounds the attempt crossed, in percent (0: not waited for).
type quietBar struct{ steal, outside float64 }

func (b quietBar) none() bool { return b.steal == 0 && b.outside == 0 }

// barOf is the bounds of g that noise n crossed and that waiting can
// help with: steal (the larger of the server node's and the client
// node's, results.Noise.Steal) and the CPU of processes outside the run
// (disturbed names them from it). Collectors that started late are no
// sign of a busy machine; rt marks a workload held to the stricter
// outside bound (study.Noise.OutsideLimit).
func barOf(n results.Noise, g study.Noise, rt bool) quietBar {
	var b quietBar
	if steal, _ := n.Steal(); steal > g.MaxStealPct {
		b.steal = g.MaxStealPct
	}
	if limit := g.OutsideLimit(rt); n.OutsidePct != nil && *n.OutsidePct > limit {
		b.outside = limit
	}
	return b
}

// quietMeter measures the machine for d: its mean steal time and the CPU
// of processes outside the run, in percent of its CPU time (a cluster's
// nodes: the larger of their steal times, and no outside CPU).
type quietMeter func(ctx context.Context, d time.Duration) (steal, out float64, err error)

// quietStep is the second a quiet machine is measured over, as the
// guard's steal over a trial is a mean too.
const quietStep = time.Second

// quietBound caps the wait: a trial's time (its duration, which holds
// its warm-up), at least 30 s, as steal here came in bursts of a minute or
// more. Waiting longer than a trial costs more than the repeat it
// protects, but a repeat inside the burst costs the trial and counts a
// disturbed one anyway.
func quietBound(s *study.Study) time.Duration {
	return max(30*time.Second, s.Spec.Duration.Duration)
}

// beforeRepeat waits for a quiet machine before the disturbed trial so
// runs again on cluster c, when no other attempt ran since its disturbed
// one. On a cluster the nodes are other machines: their steal is read
// through their CPU samplers (nodesMeter); outside CPU is not measured
// there, so no attempt crossed its bound.
func (r *run) beforeRepeat(ctx context.Context, c engine.Cluster, where string, so attemptsSoFar) error {
	if so.bar.none() || so.at != r.attemptsRun {
		return nil
	}
	meter := r.meter
	switch {
	case meter != nil:
	case r.plan.remote:
		meter = nodesMeter(c, r.engine.Kernel, r.plan.sharedKernel)
	default:
		meter = machineMeter
	}
	return r.waitQuiet(ctx, where, so.bar, meter, r.plan.remote)
}

// waitQuiet measures the machine (nodes: a cluster's) with meter a second
// at a time until a second is at or below bar, or quietBound has passed
// (or the run's budget), and says which in the log. It fails only when
// the run is cancelled; a machine it cannot measure ends the wait.
func (r *run) waitQuiet(ctx context.Context, where string, bar quietBar, meter quietMeter, nodes bool) error {
	machine, quiet := "machine", "a quiet machine"
	if nodes {
		machine, quiet = "nodes", "quiet nodes"
	}
	// A run with a budget stops waiting at its end: the repeat is owed
	// to the round, the wait is not.
	bound, end := quietBound(r.study), ""
	if b := r.design.budget; b > 0 {
		if left := b - r.spent(); left < bound {
			bound, end = left, ", the end of the run's budget"
		}
	}
	if bound < quietStep {
		r.opt.Progress.Logf("note: %s: the run's budget is spent; repeating it without waiting for %s", where, quiet)
		return nil
	}
	// The wait is counted in the seconds measured (the meter takes each)
	// or the time it took, whichever is longer: a cluster's meter adds
	// two agent round trips per node to each second, and thirty of them
	// ran past the bound. No step is begun that would end past it, a
	// step taken to last as long as the last one did.
	start := time.Now()
	for step := quietStep; ; step += quietStep {
		began := time.Now()
		steal, out, err := meter(ctx, quietStep)
		last := max(quietStep, time.Since(began))
		waited := max(step, time.Since(start))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			r.opt.Progress.Logf("note: %s: cannot measure the %s before repeating it: %v", where, machine, err)
			return nil
		}
		what := quietText(bar, steal, out)
		if (bar.steal == 0 || steal <= bar.steal) && (bar.outside == 0 || out <= bar.outside) {
			r.opt.Progress.Logf("note: %s: %s quiet after %.0f s (%s); repeating it", where, machine, waited.Seconds(), what)
			return nil
		}
		if waited+last > bound {
			r.opt.Progress.Logf("note: %s: %s still busy after %.0f s%s (%s); repeating it anyway", where, machine, waited.Seconds(), end, what)
			return nil
		}
	}
}

// quietText says the measures bar waits for over the last second.
func quietText(bar quietBar, steal, out float64) string {
	var s string
	if bar.steal > 0 {
		s = fmt.Sprintf("steal %.1f%%, bound %g%%", steal, bar.steal)
	}
	if bar.outside > 0 {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("CPU of processes outside the run %.1f%%, bound %g%%", out, bar.outside)
	}
	return s + " over the last second"
}

// machineMeter measures this machine as the noise guard does over a
// trial: steal from /proc/stat, outside CPU as the outside collector.
func machineMeter(ctx context.Context, d time.Duration) (steal, out float64, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	st0, o0, err := reading(fs)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	case <-time.After(d):
	}
	st1, o1, err := reading(fs)
	if err != nil {
		return 0, 0, err
	}
	return stealShare(st0, st1), outside.Percent(outside.Between(o0, o1), time.Since(t0).Seconds(), len(hostcpus.Machine())), nil
}

// nodesMeter measures a cluster's nodes as the noise guard measures a
// trial there: the mean steal over each node's cores online at the end,
// read by its kernel's CPU sampler (the kube engine's agent), the larger
// of the server node's and, where it runs a kernel of its own (not
// shared), the client node's. Outside CPU is not measured on a cluster
// (0). A node whose sampler fails fails the reading, after the others'
// samplers are stopped.
func nodesMeter(c engine.Cluster, kernel func(engine.Node) engine.Kernel, shared bool) quietMeter {
	return func(ctx context.Context, d time.Duration) (float64, float64, error) {
		nodes := []engine.Node{c.Server()}
		if !shared {
			nodes = append(nodes, c.Client())
		}
		var started []engine.Sampler
		var errs []error
		for _, n := range nodes {
			s := kernel(n).CPU()
			if err := s.Start(); err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.Name(), err))
				break
			}
			started = append(started, s)
		}
		if len(errs) == 0 && !sleepUntil(time.Now().Add(d), ctx.Done()) {
			errs = append(errs, ctx.Err())
		}
		var steal float64
		for i, s := range started {
			w, err := s.Stop()
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", nodes[i].Name(), err))
				continue
			}
			steal = max(steal, stealPct(w.Online()))
		}
		if err := errors.Join(errs...); err != nil {
			return 0, 0, err
		}
		return steal, 0, nil
	}
}

// reading is /proc/stat's cpu line and the outside processes' CPU ticks
// at one moment.
func reading(fs procfs.FS) (procfs.CPUStat, outside.Snapshot, error) {
	st, err := fs.Stat()
	if err != nil {
		return procfs.CPUStat{}, nil, err
	}
	o, err := outside.Take(fs, outside.Self())
	return st.CPUTotal, o, err
}

// stealShare is the steal time between two readings of /proc/stat's cpu
// line, in percent of all CPU time (the mean over the cores).
func stealShare(a, b procfs.CPUStat) float64 {
	dt := cpuTotal(b) - cpuTotal(a)
	if dt <= 0 {
		return 0
	}
	return min(100, max(0, 100*(b.Steal-a.Steal)/dt))
}
