package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// failingDriver is a workload each of whose trials fails with err; runs
// counts them.
type failingDriver struct {
	err  error
	runs *int
}

func (failingDriver) Describe() spec.Tool { return spec.Tool{Name: "iperf3"} }
func (failingDriver) Check() error        { return nil }
func (d failingDriver) Run(context.Context, workload.Trial) (workload.Result, error) {
	*d.runs++
	return workload.Result{}, d.err
}

// A trial whose failure left something of the engine's on the host (a
// pod start-up burst's pod it could not delete: engine.ErrLeftBehind)
// ends the run at once, through its teardown (the cluster closed), with
// an error that says what was left and what removes it; no attempt is
// retried and no cell given up. Before, the trial was retried beside
// the leftover, its cell given up, and the run went on to the next
// trials, which made their pods under the same names. A trial's
// ordinary failure is still retried.
func TestTrialLeftBehindEndsTheRun(t *testing.T) {
	saved := collect.List
	t.Cleanup(func() { collect.List = saved })
	collect.List = nil
	left := engine.LeftBehind(errors.New("delete pod srvb0 from node server: cni DEL cbr0: host-local: timed out"))
	for _, tc := range []struct {
		name       string
		err        error
		leftBehind bool
	}{
		{name: "burst pod left", err: fmt.Errorf("podstartup: %w", left), leftBehind: true},
		{name: "trial failed", err: errors.New("iperf3: connection refused")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := roundsStudy(t, "trials=3", "budget=0s", "tunings=[baseline]", "workloads.tcp.parallel=1")
			e := newSetUpEngine()
			r, _, _ := setUpRun(t, s, e, nil)
			r.unitRun = nil // the real runUnit, over the driver's trials
			runs := 0
			r.plan.drivers = map[string]workload.Driver{}
			for _, w := range s.Variants() {
				r.plan.drivers[w.Name] = failingDriver{err: tc.err, runs: &runs}
			}
			err := r.execute(context.Background())
			if e.closes != e.ups[s.Spec.Datapaths[0].Name] {
				t.Errorf("%d clusters closed of %d built; want every one torn down", e.closes, e.ups[s.Spec.Datapaths[0].Name])
			}
			run := loadRun(t, r)
			if !tc.leftBehind {
				if err != nil || runs < 2 || len(run.Marked) != runs {
					t.Errorf("run ended with %v after %d trial runs, %d recorded failed; want each failed trial retried, recorded, and the run gone on",
						err, runs, len(run.Marked))
				}
				return
			}
			if !errors.Is(err, engine.ErrLeftBehind) || !strings.Contains(err.Error(), "delete pod srvb0") ||
				!strings.Contains(err.Error(), "cnibench cleanup") {
				t.Fatalf("run ended with %v; want it to say what was left and that cnibench cleanup removes it", err)
			}
			if runs != 1 {
				t.Errorf("%d trial runs; want the run ended at the first, not retried beside what it left", runs)
			}
			if len(run.Marked) != 0 || len(run.Stops) != 0 {
				t.Errorf("marked %+v, stops %+v; want no attempt recorded and no cell given up", run.Marked, run.Stops)
			}
		})
	}
}
