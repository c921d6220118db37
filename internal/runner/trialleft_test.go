package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
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
// an error that says what the failure did not undo, that the teardown
// removes what it can and the cleanup command the rest; the attempt is
// recorded failed, not retried, and no cell given up at the first.
// Before, the trial was retried beside the leftover, its cell given up,
// and the run went on to the next trials, which made their pods under
// the same names. A trial's ordinary failure is still retried.
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
				!strings.Contains(err.Error(), "its teardown removes what it can") ||
				!strings.Contains(err.Error(), "if anything remains, the journal is kept and cnibench cleanup") ||
				!strings.Contains(err.Error(), "a --resume runs the trial again (1 of its attempts failed; its cell is given up after 3)") {
				t.Fatalf("run ended with %v; want it to say what was not undone, that the teardown removes what it can, "+
					"cnibench cleanup what remains, and what a --resume does", err)
			}
			if strings.Contains(err.Error(), "left on the host") {
				t.Errorf("run ended with %v; the teardown that follows may remove it all", err)
			}
			if runs != 1 {
				t.Errorf("%d trial runs; want the run ended at the first, not retried beside what it left", runs)
			}
			if len(run.Marked) != 1 || run.Marked[0].Error != tc.err.Error() || run.Marked[0].Discarded != "failed" ||
				run.Marked[0].Attempt != 1 || len(run.Samples) != 0 || len(run.Stops) != 0 {
				t.Errorf("marked %+v, samples %+v, stops %+v; want the attempt recorded failed, and no cell given up",
					run.Marked, run.Samples, run.Stops)
			}
		})
	}
}

// A trial that leaves something behind at every attempt (a datapath's
// DetachPod, or a CNI DEL, that always fails for the burst's pods) ends
// each run at it, but its attempts count toward the retry bound across
// resumes: each resume runs it as the next attempt, and the third
// failure gives its cell up, so the next resume goes on to the cells
// after it and finishes the run, with each attempt recorded once, the
// cell given up as analysis and the report read it, and its stop (in a
// design that records them) saying why. Before, the attempt went
// unrecorded: every --resume ran it again as attempt 1 and ended there,
// the cells after it never measured.
func TestTrialLeftBehindCountsAcrossResumes(t *testing.T) {
	saved := collect.List
	t.Cleanup(func() { collect.List = saved })
	collect.List = nil
	left := fmt.Errorf("podstartup: %w", engine.LeftBehind(errors.New("delete pod srvb0 from node server: detach: ovs-ofctl: timed out")))
	for _, design := range []string{"trials=3", "trials.min=3"} {
		s := roundsStudy(t, design, "budget=0s", "tunings=[baseline]", "workloads.tcp.parallel=1", "replicas=[1, 2]")
		runs := 0
		// The cell of one pod pair runs the real runUnit over a driver
		// whose every trial fails that way; the other, the fake trials
		// that measure.
		real := func(r *run) {
			r.plan.drivers = map[string]workload.Driver{}
			for _, w := range s.Variants() {
				r.plan.drivers[w.Name] = failingDriver{err: left, runs: &runs}
			}
			f := &fakeTrials{r: r}
			r.unitRun = func(ctx context.Context, c engine.Cluster, u unit, round int, tgt *knob.Target) error {
				if u.cell.Replicas == 1 {
					return r.runUnit(ctx, c, u, round, tgt)
				}
				_, err := f.trial(u, round)
				return err
			}
		}
		e := newSetUpEngine()
		r, _, _ := setUpRun(t, s, e, nil)
		real(r)
		err := r.execute(context.Background())
		for part := 1; part <= study.MaxRetries; part++ {
			if !errors.Is(err, engine.ErrLeftBehind) ||
				!strings.Contains(err.Error(), fmt.Sprintf("a --resume runs the trial again (%d of its attempts failed", part)) {
				t.Fatalf("%s, part %d: run ended with %v; want it ended at the trial that left something, to be run again", design, part, err)
			}
			r = resumeSetUp(t, s, r, e)
			real(r)
			err = r.execute(context.Background())
		}
		if !errors.Is(err, engine.ErrLeftBehind) || !strings.Contains(err.Error(), "3 of the trial's attempts failed, so its cell is given up") {
			t.Fatalf("%s, part 3: run ended with %v; want it ended at the trial's third failure, its cell given up", design, err)
		}
		r = resumeSetUp(t, s, r, e)
		real(r)
		var log bytes.Buffer
		r.opt.Progress = progress.New(&log)
		if err := r.execute(context.Background()); err != nil {
			t.Fatalf("%s, part 4: %v; want the cell given up and the run finished", design, err)
		}
		if want := fmt.Sprintf("running up to %d trials\n", s.Spec.Trials.Max); !strings.Contains(log.String(), want) {
			t.Errorf("%s, part 4's log %q: want %q, the other cell's trials", design, log.String(), want)
		}
		if runs != study.MaxRetries+1 || e.closes != e.ups[s.Spec.Datapaths[0].Name] {
			t.Errorf("%s: the trial that left something ran %d times, %d clusters closed of %d; want %d runs, every cluster torn down",
				design, runs, e.closes, e.ups[s.Spec.Datapaths[0].Name], study.MaxRetries+1)
		}
		run := loadRun(t, r)
		for i, m := range run.Marked {
			if m.Cell.Replicas != 1 || m.Trial != 1 || m.Attempt != i+1 || m.Part != i || m.Error != left.Error() || m.Discarded != "failed" {
				t.Errorf("%s: marked attempt %d: %+v; want attempt %d of trial 1 at 1 replica, in part %d, failed", design, i, m, i+1, i)
			}
		}
		if len(run.Marked) != study.MaxRetries+1 || len(run.Samples) < s.Spec.Trials.Min {
			t.Errorf("%s: %d marked attempts, %d counted trials; want %d, and the other cell's trials counted",
				design, len(run.Marked), len(run.Samples), study.MaxRetries+1)
		}
		for _, x := range run.Samples {
			if x.Cell.Replicas != 2 {
				t.Errorf("%s: counted %+v; want only the cell at 2 replicas counted", design, x.Cell)
			}
		}
		why := results.GaveUp(1, study.MaxRetries+1, left.Error())
		gaveUp := analysis.GaveUp(run)
		if len(gaveUp) != 1 || gaveUp[run.Marked[0].Cell] != why {
			t.Errorf("%s: cells given up %v; want the one replica's, %q", design, gaveUp, why)
		}
		if u := analysis.Unfinished(s, run); len(u) != 0 {
			t.Errorf("%s: unfinished cells %v; want none", design, u)
		}
		if !s.RecordsStops() {
			continue
		}
		failed := map[int]string{}
		for _, st := range run.Stops {
			failed[st.Cell.Replicas] = st.Failed
		}
		if len(run.Stops) != 2 || failed[1] != why || failed[2] != "" {
			t.Errorf("%s: stops %+v; want 1 replica's given up (%q), 2 replicas' not", design, run.Stops, why)
		}
	}
}
