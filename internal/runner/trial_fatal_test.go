package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A trial knob applies, the next one fails, and undoing the first fails
// too: a knob that does not revert ends the run (fatalError), rather than
// a retried trial measuring on top of the leftover.
func TestTrialKnobNotRevertedIsFatal(t *testing.T) {
	saved := knob.List
	defer func() { knob.List = saved }()
	reverted := false
	knob.List = []knob.Entry{
		{Name: "a", Scope: knob.Trial, Wanted: func(*knob.Target) bool { return true },
			Apply: func(context.Context, *knob.Target) (knob.Undo, error) {
				return func() error { reverted = true; return errors.New("revert a: EIO") }, nil
			}},
		{Name: "b", Scope: knob.Trial, Wanted: func(*knob.Target) bool { return true },
			Apply: func(context.Context, *knob.Target) (knob.Undo, error) { return nil, errors.New("apply b failed") }},
	}
	r := &run{study: &study.Study{}, plan: &plan{machine: cpuset.Set{0, 1}}}
	_, err := r.trial(context.Background(), nil, results.Cell{}, 1, study.Tuning{}, study.Workload{}, placed{}, &knob.Target{})
	if !reverted || err == nil || !isFatal(err) {
		t.Errorf("err %v (fatal %v), reverted %v: want a fatal error after the revert was tried", err, isFatal(err), reverted)
	}
}

// A run that measured nothing fails instead of pointing to a report it
// never built; one that measured builds it, and keeps its own error first.
func TestFinish(t *testing.T) {
	built := 0
	build := func(string) error { built++; return errors.New("disk full") }
	if err := finish("d", false, nil, build); !errors.Is(err, ErrNothingMeasured) || built != 0 {
		t.Errorf("nothing measured: %v (built %d)", err, built)
	}
	run := errors.New("interrupted")
	if err := finish("d", false, run, build); err != run {
		t.Errorf("nothing measured, interrupted: %v", err)
	}
	if err := finish("d", true, nil, build); err == nil || built != 1 {
		t.Errorf("measured, report failed: %v (built %d)", err, built)
	}
	if err := finish("d", true, run, build); err != run || built != 2 {
		t.Errorf("measured, interrupted: %v (built %d)", err, built)
	}
}
