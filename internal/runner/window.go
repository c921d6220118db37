package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/collect"
)

// window runs the collectors over the measured part of a trial: from
// warm-up end after the clients started to the end of the duration.
type window struct {
	sampler          *collect.Set
	warmup, duration time.Duration
	// task: the window ends when the workload returns (newTaskWindow).
	task       bool
	once       sync.Once
	done       chan struct{}
	cancel     chan struct{}
	cancelOnce sync.Once
	w          collect.Result
	err        error
	// t0 is when the workload reported its start; opened is when every
	// collector had started (planned: t0+warmup), closed when they began
	// to stop (planned: t0+duration). Zero until they happen.
	t0, opened, closed time.Time
}

func newWindow(s *collect.Set, warmup, duration time.Duration) *window {
	return &window{sampler: s, warmup: warmup, duration: duration,
		done: make(chan struct{}), cancel: make(chan struct{})}
}

// newTaskWindow is the window of a task workload (spec.Tool.Task): no
// warm-up, open from Started until the workload returns.
func newTaskWindow(s *collect.Set) *window {
	w := newWindow(s, 0, 24*time.Hour)
	w.task = true
	return w
}

// started is the workload's Started callback.
func (w *window) started(t0 time.Time) {
	w.once.Do(func() { go w.sample(t0) })
}

func (w *window) sample(t0 time.Time) {
	defer close(w.done)
	w.t0 = t0
	if !sleepUntil(t0.Add(w.warmup), w.cancel) {
		w.err = errors.New("trial ended before its warm-up did")
		return
	}
	s := w.sampler
	if err := s.Start(context.Background()); err != nil {
		w.err = err
		return
	}
	w.opened = s.Opened()
	sleepUntil(t0.Add(w.duration), w.cancel)
	w.closed = time.Now()
	w.w, w.err = s.Stop(context.Background())
}

// result waits for the window; if the workload ended early the window is
// closed at once with what it has.
func (w *window) result() (collect.Result, error) {
	started := false
	w.once.Do(func() { close(w.done) }) // never started: nothing to wait for
	select {
	case <-w.done:
		started = true
	default:
	}
	if w.task {
		// The task is over: so is its window.
		w.cancelOnce.Do(func() { close(w.cancel) })
		<-w.done
	}
	if !started && !w.task {
		w.cancelOnce.Do(func() { close(w.cancel) })
		<-w.done
		// The window never ran: end the whole-trial collectors it would
		// have stopped.
		_, _ = w.sampler.Stop(context.Background())
	}
	if (w.w.CPU == nil || w.w.CPU.Cores == nil) && w.err == nil {
		return w.w, errors.New("no metric window: the workload never reported that it started")
	}
	return w.w, w.err
}

// span is how the collectors' window matched the planned one.
type span struct {
	// Pct is the share of the planned window (warm-up end to duration)
	// during which every collector was recording (the two windows'
	// overlap); nil for a task's window, which has no planned length,
	// or one that never opened.
	Pct *float64
	// Late is how long after warm-up end the last collector started.
	Late time.Duration
	// Slowest is the collector whose start took longest, and how long
	// ("trace 2.9 s"); "" when every one took under a tenth of a second.
	Slowest string
	// EndLate is how long after the planned end the workload returned:
	// its start-up and its tear-down, which on a slow machine shift the
	// workload's own measured seconds past the collectors' window.
	EndLate time.Duration
}

// span measures the window against its plan once the workload, which
// returned at end, and the window are both over (after result). The
// share is of the planned window the collectors' window overlapped: a
// window that opened late and closed late (a slow hook inside it) still
// missed the start of the planned one.
func (w *window) span(end time.Time) span {
	if w.task || w.t0.IsZero() || w.opened.IsZero() {
		return span{}
	}
	// Everything as offsets from t0: the plan is [warmup, duration].
	opened, closed := w.opened.Sub(w.t0), w.closed.Sub(w.t0)
	pct := 100.0
	if planned := w.duration - w.warmup; planned > 0 {
		overlap := max(min(closed, w.duration)-max(opened, w.warmup), 0)
		pct = 100 * float64(overlap) / float64(planned)
	}
	sp := span{Pct: &pct, Late: max(opened-w.warmup, 0), EndLate: max(end.Sub(w.t0)-w.duration, 0)}
	if name, d := w.sampler.Slowest(); d >= 100*time.Millisecond {
		sp.Slowest = fmt.Sprintf("%s %.1f s", name, d.Seconds())
	}
	return sp
}

func sleepUntil(t time.Time, cancel <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-cancel:
		return false
	}
}
