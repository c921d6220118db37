package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A repeat waits for the measures the attempt crossed, at the guard's
// bounds; a late collector is no busy machine and waits for nothing.
func TestQuietBarIsWhatTheAttemptCrossed(t *testing.T) {
	g := study.Noise{MaxStealPct: 10, MaxOutsidePct: 25, Repeats: 1}
	pct := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		n    results.Noise
		rt   bool
		want quietBar
	}{
		{results.Noise{StealPct: 23}, false, quietBar{steal: 10}},
		{results.Noise{StealPct: 2, OutsidePct: pct(40)}, false, quietBar{outside: 25}},
		{results.Noise{StealPct: 2, OutsidePct: pct(17)}, true, quietBar{outside: 5}},
		{results.Noise{StealPct: 12, OutsidePct: pct(30)}, false, quietBar{steal: 10, outside: 25}},
		{results.Noise{StealPct: 2, OutsidePct: pct(3), WindowPct: pct(35)}, false, quietBar{}},
	} {
		if got := barOf(c.n, g, c.rt); got != c.want {
			t.Errorf("%+v (round trips %v): bar %+v, want %+v", c.n, c.rt, got, c.want)
		}
	}
}

// fakeMeter answers the seconds a quiet wait measures from a list (its
// last value over and over), counting them.
type fakeMeter struct {
	steal, out []float64
	calls      int
}

func (f *fakeMeter) measure(ctx context.Context, d time.Duration) (float64, float64, error) {
	if d != quietStep {
		panic("a quiet wait measures one step at a time")
	}
	i := min(f.calls, len(f.steal)-1)
	f.calls++
	return f.steal[i], f.out[i], ctx.Err()
}

// The wait ends on the first second at or below every bound it waits for
// (another measure's value does not hold it), or after quietBound's
// seconds with the repeat going ahead anyway; the log says which, with
// the last second's values. A cancelled run ends the wait with its error.
func TestWaitQuiet(t *testing.T) {
	var log bytes.Buffer
	r := newRoundsRun(t, roundsStudy(t), t.TempDir(), &log)
	m := &fakeMeter{steal: []float64{31, 18, 10, 40}, out: []float64{60, 60, 60, 60}}
	if err := r.waitQuiet(context.Background(), "x trial 2", quietBar{steal: 10}, m.measure, false); err != nil {
		t.Fatal(err)
	}
	if m.calls != 3 || !strings.Contains(log.String(), "note: x trial 2: machine quiet after 3 s (steal 10.0%, bound 10% over the last second); repeating it") {
		t.Errorf("%d seconds measured, log %q; want quiet at the third", m.calls, log.String())
	}

	log.Reset()
	m = &fakeMeter{steal: []float64{3}, out: []float64{12}}
	if err := r.waitQuiet(context.Background(), "x trial 2", quietBar{steal: 10, outside: 5}, m.measure, false); err != nil {
		t.Fatal(err)
	}
	bound := quietBound(r.study)
	if want := int(bound / quietStep); m.calls != want || !strings.Contains(log.String(),
		fmt.Sprintf("machine still busy after %.0f s", bound.Seconds())+" (steal 3.0%, bound 10%; CPU of processes outside the run 12.0%, bound 5% over the last second); repeating it anyway") {
		t.Errorf("%d seconds measured (want %d), log %q", m.calls, want, log.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.waitQuiet(ctx, "x trial 2", quietBar{steal: 10}, m.measure, false); err == nil {
		t.Error("a cancelled run's wait ended without its error")
	}
}

// A run with a budget waits no longer than the budget has left, and not
// at all once it is spent.
func TestWaitQuietStopsAtTheBudget(t *testing.T) {
	var log bytes.Buffer
	r := newRoundsRun(t, roundsStudy(t), t.TempDir(), &log)
	r.design.budget = 10 * time.Minute
	r.began = time.Now().Add(-10*time.Minute + 5500*time.Millisecond)
	m := &fakeMeter{steal: []float64{40}, out: []float64{0}}
	if err := r.waitQuiet(context.Background(), "x trial 2", quietBar{steal: 10}, m.measure, false); err != nil {
		t.Fatal(err)
	}
	if m.calls != 5 || !strings.Contains(log.String(), "machine still busy after 5 s, the end of the run's budget (steal 40.0%") {
		t.Errorf("%d seconds measured, log %q; want 5, ended by the budget", m.calls, log.String())
	}

	log.Reset()
	m.calls = 0
	r.began = time.Now().Add(-11 * time.Minute)
	if err := r.waitQuiet(context.Background(), "x trial 2", quietBar{steal: 10}, m.measure, false); err != nil {
		t.Fatal(err)
	}
	if m.calls != 0 || !strings.Contains(log.String(), "budget is spent; repeating it without waiting") {
		t.Errorf("%d seconds measured after the budget, log %q", m.calls, log.String())
	}
}

// A meter slower than the second it measures (a cluster's: two agent
// round trips per node on top) is counted by the time it took: the wait
// ends by the bound in time, not in seconds measured, which ran past it.
func TestWaitQuietCountsTheTimeTaken(t *testing.T) {
	var log bytes.Buffer
	r := newRoundsRun(t, roundsStudy(t), t.TempDir(), &log)
	r.design.budget = 10 * time.Minute
	r.began = time.Now().Add(-10*time.Minute + 4500*time.Millisecond)
	m := &fakeMeter{steal: []float64{40}, out: []float64{0}}
	slow := func(ctx context.Context, d time.Duration) (float64, float64, error) {
		time.Sleep(1600 * time.Millisecond)
		return m.measure(ctx, d)
	}
	if err := r.waitQuiet(context.Background(), "x trial 2", quietBar{steal: 10}, slow, true); err != nil {
		t.Fatal(err)
	}
	// 1.6 s, 3.2 s: a third step as long would end at 4.8 s, past the
	// 4.5 s left; counted in seconds measured (1, 2, 3, 4) it began a
	// third and a fourth, and counted in time with one-second steps, a
	// third.
	if m.calls != 2 || !strings.Contains(log.String(), "nodes still busy after 3 s, the end of the run's budget") {
		t.Errorf("%d seconds measured, log %q; want 2, ended by the budget after 3 s", m.calls, log.String())
	}
}

// The bound is a trial's time (its duration holds its warm-up), at
// least 30 s.
func TestQuietBound(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Warmup.Duration, s.Spec.Duration.Duration = time.Second, 4*time.Second
	if got := quietBound(s); got != 30*time.Second {
		t.Errorf("quick trial: bound %s, want 30s", got)
	}
	s.Spec.Warmup.Duration, s.Spec.Duration.Duration = 5*time.Second, 60*time.Second
	if got := quietBound(s); got != 60*time.Second {
		t.Errorf("paper-length trial: bound %s, want its 60s", got)
	}
}

// Only a repeat that would start right after its disturbed attempt
// waits, on this machine or a cluster: not when another attempt ran
// since (a round of several cells runs the round's other trials first),
// not for a late collector.
func TestBeforeRepeatWaitsOnlyRightAfter(t *testing.T) {
	var log bytes.Buffer
	r := newRoundsRun(t, roundsStudy(t), t.TempDir(), &log)
	m := &fakeMeter{steal: []float64{2}, out: []float64{0}}
	r.meter = m.measure
	r.attemptsRun = 7
	steal := quietBar{steal: 10}
	for _, c := range []struct {
		so     attemptsSoFar
		remote bool
		waits  bool
	}{
		{attemptsSoFar{bar: steal, at: 7}, false, true},
		{attemptsSoFar{bar: steal, at: 6}, false, false},
		{attemptsSoFar{bar: steal, at: 7}, true, true},
		{attemptsSoFar{at: 7}, false, false},
		{attemptsSoFar{}, false, false}, // a trial's first attempt
	} {
		m.calls = 0
		r.plan.remote = c.remote
		if err := r.beforeRepeat(context.Background(), nil, "x", c.so); err != nil {
			t.Fatal(err)
		}
		if waited := m.calls > 0; waited != c.waits {
			t.Errorf("%+v, remote %v: waited %v, want %v", c.so, c.remote, waited, c.waits)
		}
	}
}

func TestStealShare(t *testing.T) {
	a := procfs.CPUStat{User: 10, Idle: 80, Steal: 10}
	b := procfs.CPUStat{User: 15, Idle: 90, Steal: 15} // 5 of 20 s stolen
	if got := stealShare(a, b); got != 25 {
		t.Errorf("steal share %g, want 25", got)
	}
	if got := stealShare(a, a); got != 0 {
		t.Errorf("no time passed: %g, want 0", got)
	}
}

// machineMeter reads this machine: shares within 0..100 over a short
// step, and the run's cancellation.
func TestMachineMeter(t *testing.T) {
	steal, out, err := machineMeter(context.Background(), 50*time.Millisecond)
	if err != nil {
		if _, serr := os.Stat("/proc/stat"); serr != nil {
			t.Skipf("skipped: no /proc/stat: %v", serr)
		}
		t.Fatal(err)
	}
	if steal < 0 || steal > 100 || out < 0 {
		t.Errorf("steal %g%%, outside %g%%", steal, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := machineMeter(ctx, time.Hour); err == nil {
		t.Error("cancelled: no error")
	}
}
