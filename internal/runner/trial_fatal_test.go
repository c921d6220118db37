package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
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

// TestNodeBusyIsFatal: a knob write an agent refused because another
// run's session is changing the node stops the run (said once), through
// the wrapping a trial's knob error gets; a cell's ordinary failure does
// not. Each trial was retried and its cell given up before, one warning
// per trial, the run going on to be refused in every cell.
func TestNodeBusyIsFatal(t *testing.T) {
	busy := &agent.RemoteError{Op: "write", Msg: "node w1 is in use by run 3f9a2c", Kind: agent.KindBusy, Node: "w1"}
	err := fmt.Errorf("apply tuning rps: %w", errors.Join(fmt.Errorf("write host sysfs:x=3: %w", busy), errors.New("revert: nothing to do")))
	if !isFatal(err) {
		t.Errorf("isFatal(%v) = false; want a busy node to stop the run", err)
	}
	if !isFatal(fmt.Errorf("apply tuning rps: %w", &agent.RemoteError{Op: "write", Msg: "a dead session's changes could not be put back", Kind: agent.KindUnclean})) {
		t.Error("isFatal of an unclean node = false; want it to stop the run")
	}
	if isFatal(fmt.Errorf("apply tuning rps: %w", &agent.RemoteError{Op: "write", Msg: "no such file", Kind: agent.KindNotExist})) {
		t.Error("isFatal of a missing file = true; want a trial's ordinary failure")
	}
}
