package runner

import (
	"math"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/collect"
)

// span measures the collectors' window against the plan: a window whose
// collectors took 1.5 s of its 2 s to start covered 25% of it, and a
// workload that returned 2 s after the planned end is 2 s late.
func TestWindowSpan(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	w := newWindow(&collect.Set{}, time.Second, 3*time.Second)
	w.t0, w.opened, w.closed = t0, t0.Add(2500*time.Millisecond), t0.Add(3*time.Second)
	sp := w.span(t0.Add(5 * time.Second))
	if sp.Pct == nil || *sp.Pct != 25 || sp.Late != 1500*time.Millisecond || sp.EndLate != 2*time.Second {
		t.Errorf("span = %+v (pct %v), want 25%%, 1.5 s late, ended 2 s late", sp, sp.Pct)
	}
	// Opened after its planned close: nothing recorded, 0%.
	w.opened, w.closed = t0.Add(4*time.Second), t0.Add(4*time.Second)
	if sp := w.span(t0.Add(4 * time.Second)); sp.Pct == nil || *sp.Pct != 0 || sp.EndLate != time.Second {
		t.Errorf("window opened after its close: %+v", sp)
	}
	// Opened 1.7 s late and closed 2 s late (a slow hook inside it):
	// it overlapped 0.3 s of the planned 2 s.
	w.opened, w.closed = t0.Add(2700*time.Millisecond), t0.Add(5*time.Second)
	if sp := w.span(t0.Add(5 * time.Second)); math.Abs(*sp.Pct-15) > 1e-9 {
		t.Errorf("late window closed late: %v%%, want 15%%", *sp.Pct)
	}
	// On time: 100%, never more.
	w.opened, w.closed = t0.Add(time.Second), t0.Add(3*time.Second+time.Millisecond)
	if sp := w.span(t0.Add(3 * time.Second)); *sp.Pct != 100 || sp.Late != 0 || sp.EndLate != 0 {
		t.Errorf("window on time: %+v", sp)
	}
	// A task's window and one that never opened have no share.
	if sp := newTaskWindow(&collect.Set{}).span(t0); sp.Pct != nil {
		t.Errorf("task window: %+v", sp)
	}
	if sp := newWindow(&collect.Set{}, time.Second, 3*time.Second).span(t0); sp.Pct != nil {
		t.Errorf("window never opened: %+v", sp)
	}
}
