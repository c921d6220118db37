package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// notLost is the handler of a lost set-up for tests whose set-ups
// succeed or end the run: it returns the loss as an error.
func notLost(l setUpLost) error {
	return fmt.Errorf("set-up given up after %d attempts: %s", l.attempts, l.last)
}

// setUpEngine builds fake clusters, counting its Up calls per datapath
// and its clusters' Scale calls per datapath and pod count; upErr and
// scaleErr, when set, fail an Up (by its call number for the datapath)
// or a Scale (by its call number for the datapath and count), and
// closeErr every teardown. brokenPod, when set and true, has a Scale
// that adds pods (by its call number for the datapath and count) leave
// its last new pod broken, as a kube pod in a terminal state: that
// Scale and every later one fail on it until a Scale deletes it.
type setUpEngine struct {
	envEngine
	ups, scales map[string]int
	closes      int
	upErr       func(dp string, call int) error
	scaleErr    func(dp string, pods, call int) error
	brokenPod   func(dp string, pods, call int) bool
	closeErr    error
}

func newSetUpEngine() *setUpEngine {
	return &setUpEngine{ups: map[string]int{}, scales: map[string]int{}}
}

func (e *setUpEngine) Up(_ context.Context, _ engine.Run, d engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	e.ups[d.Spec.Name]++
	if e.upErr != nil {
		if err := e.upErr(d.Spec.Name, e.ups[d.Spec.Name]); err != nil {
			return nil, results.DatapathEnv{}, err
		}
	}
	return &setUpCluster{e: e, dp: d.Spec.Name}, results.DatapathEnv{Type: "fake"}, nil
}

// setUpCluster is one of setUpEngine's clusters: pods pairs, the
// broken-th (from 1; 0: none) broken.
type setUpCluster struct {
	envCluster
	e            *setUpEngine
	dp           string
	pods, broken int
}

func (c *setUpCluster) Scale(_ context.Context, n int) ([]engine.Pod, []engine.Pod, error) {
	k := fmt.Sprintf("%s/%d", c.dp, n)
	c.e.scales[k]++
	if c.e.scaleErr != nil {
		if err := c.e.scaleErr(c.dp, n, c.e.scales[k]); err != nil {
			return nil, nil, err
		}
	}
	if c.broken > n {
		c.broken = 0 // deleted
	}
	if n > c.pods && c.e.brokenPod != nil && c.e.brokenPod(c.dp, n, c.e.scales[k]) {
		c.broken = n
	}
	c.pods = n
	if c.broken > 0 {
		return nil, nil, fmt.Errorf("pod srv%d: terminated (Error)", c.broken-1)
	}
	pods := func() []engine.Pod { return make([]engine.Pod, n) } // placed, never used: the trials are fakes
	return pods(), pods(), nil
}

func (c *setUpCluster) Close() error { c.e.closes++; return c.e.closeErr }

// setUpRun is a run of s on e whose trials are f's and whose only knobs
// are knobs.
func setUpRun(t *testing.T, s *study.Study, e *setUpEngine, knobs []knob.Entry) (r *run, f *fakeTrials, log *bytes.Buffer) {
	t.Helper()
	saved := knob.List
	t.Cleanup(func() { knob.List = saved })
	knob.List = knobs
	log = &bytes.Buffer{}
	r = newRoundsRun(t, s, t.TempDir(), log)
	r.engine = e
	r.plan.datapaths = map[string]engine.Datapath{}
	for _, d := range s.Spec.Datapaths {
		r.plan.datapaths[d.Name] = engine.Datapath{Spec: d}
	}
	f = &fakeTrials{r: r}
	r.unitRun = func(_ context.Context, _ engine.Cluster, u unit, round int, _ *knob.Target) error {
		_, err := f.trial(u, round)
		return err
	}
	return r, f, log
}

// loadRun closes r's files and loads its run directory.
func loadRun(t *testing.T, r *run) *results.Run {
	t.Helper()
	r.out.Close()
	run, err := results.Load(r.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// checkGivenUpAtSetUp checks run: the cells lost names were given up at
// their set-up, each with one results.SetUpFailed record at trial 1
// whose why (its error) says wantErr and is its stop's and analysis's
// why, with no counted trial; every other cell counted trials trials,
// with no attempt marked; and no cell is unfinished.
func checkGivenUpAtSetUp(t *testing.T, s *study.Study, run *results.Run, lost func(results.Cell) bool, wantErr string, trials int) {
	t.Helper()
	counted := map[results.Cell]int{}
	for _, x := range run.Samples {
		counted[x.Cell]++
	}
	why := map[results.Cell]string{}
	for _, x := range run.Marked {
		if x.Discarded != results.SetUpFailed || !lost(x.Cell) || x.Trial != 1 || why[x.Cell] != "" {
			t.Errorf("marked attempt %+v: want one set-up record per lost cell, at trial 1", x)
			continue
		}
		why[x.Cell] = x.Error
	}
	stops := map[results.Cell]results.Stop{}
	for _, st := range run.Stops {
		stops[st.Cell] = st
	}
	gaveUp := analysis.GaveUp(run)
	for _, c := range s.Cells() {
		if !lost(c) {
			if counted[c] != trials || gaveUp[c] != "" || stops[c].Failed != "" {
				t.Errorf("%s: %d counted trials, given up %q, stop %+v; want %d trials measured", cellID(c), counted[c], gaveUp[c], stops[c], trials)
			}
			continue
		}
		w := why[c]
		if counted[c] != 0 || !strings.Contains(w, "trial 1: its set-up failed 2 attempts; last: ") || !strings.Contains(w, wantErr) {
			t.Errorf("%s: %d counted trials, set-up record %q; want none counted and the record saying %q", cellID(c), counted[c], w, wantErr)
		}
		if gaveUp[c] != w {
			t.Errorf("%s: analysis.GaveUp says %q, want the record's %q", cellID(c), gaveUp[c], w)
		}
		if s.RecordsStops() && (stops[c].Status != "failed" || stops[c].Failed != w) {
			t.Errorf("%s: stop %+v; want failed, with the record's why", cellID(c), stops[c])
		}
	}
	if u := analysis.Unfinished(s, run); len(u) != 0 {
		t.Errorf("unfinished cells %v: a cell given up at its set-up is done", u)
	}
}

// A datapath whose cluster cannot be built (Up fails its two attempts)
// has its cells given up with the error in samples.jsonl (and stops.json),
// and the run goes on with the other datapath and returns as a run with
// given-up trials does: no error, the report listing the cells. Before,
// the run ended there ("build cluster for macvlan: ...", exit 1, "continue
// it with --resume"), and every resume failed the same way. In an
// adaptive design the given-up cells stop as failed and the others run
// on.
func TestLostDatapathGivesUpItsCells(t *testing.T) {
	for _, set := range [][]string{{"trials=3"}, {"trials.min=3"}} {
		s := datapathsStudy(t, append([]string{"datapaths=[bridge, macvlan]", "replicas=[1, 4]"}, set...)...)
		e := newSetUpEngine()
		e.upErr = func(dp string, _ int) error {
			if dp == "macvlan" {
				return errors.New("macvlan: operation not supported")
			}
			return nil
		}
		r, _, log := setUpRun(t, s, e, nil)
		if err := r.execute(context.Background()); err != nil {
			t.Fatalf("%v: %v; want the run to go on past the lost datapath", set, err)
		}
		if e.ups["macvlan"] != setUpAttempts || e.ups["bridge"] != 3 {
			t.Errorf("%v: Up calls %v; want macvlan's 2 in its first round, then none, and bridge's one a round", set, e.ups)
		}
		run := loadRun(t, r)
		checkGivenUpAtSetUp(t, s, run, func(c results.Cell) bool { return c.Datapath == "macvlan" },
			"build cluster for macvlan: macvlan: operation not supported", 3)
		if !strings.Contains(log.String(), "warning: datapath macvlan: set-up failed 2 attempts") {
			t.Errorf("%v: log %q: want the lost set-up warned of", set, log)
		}
	}
}

// A set-up that fails once and then succeeds (Up, Scale, a datapath's
// or pods' knob) is tried again and every cell is measured: nothing is
// given up, nothing is marked.
func TestSetUpRetried(t *testing.T) {
	once := func(call int) error {
		if call == 1 {
			return errors.New("timed out")
		}
		return nil
	}
	onceKnob := func(name string, scope knob.Scope) knob.Entry {
		calls := 0
		return knob.Entry{Name: name, Scope: scope, Wanted: func(*knob.Target) bool { return true },
			Apply: func(context.Context, *knob.Target) (knob.Undo, error) {
				calls++
				return func() error { return nil }, once(calls)
			}}
	}
	for _, tc := range []struct {
		name  string
		s     *study.Study
		knobs bool
		ups   int // of the first datapath
	}{
		{"one datapath", roundsStudy(t, "trials=3", "budget=0s"), false, 2},
		{"shared rounds", datapathsStudy(t, "datapaths=[bridge, macvlan]", "replicas=[1, 4]", "trials=3"), false, 4},
		{"one datapath, knobs", roundsStudy(t, "trials=3", "budget=0s"), true, 2},
	} {
		e := newSetUpEngine()
		var knobs []knob.Entry
		if tc.knobs {
			knobs = []knob.Entry{onceKnob("dp", knob.Datapath), onceKnob("pods", knob.Pods)}
		} else {
			e.upErr = func(dp string, call int) error {
				if dp == tc.s.Spec.Datapaths[0].Name {
					return once(call)
				}
				return nil
			}
			e.scaleErr = func(_ string, pods, call int) error {
				if pods == 4 {
					return once(call)
				}
				return nil
			}
		}
		r, _, _ := setUpRun(t, tc.s, e, knobs)
		if err := r.execute(context.Background()); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := e.ups[tc.s.Spec.Datapaths[0].Name]; got != tc.ups {
			t.Errorf("%s: %d Up calls of the first datapath, want %d", tc.name, got, tc.ups)
		}
		checkGivenUpAtSetUp(t, tc.s, loadRun(t, r), func(results.Cell) bool { return false }, "", 3)
	}
}

// A replica count whose pods cannot be made (Scale fails its two
// attempts) has only its own cells of that datapath given up; the
// datapath's other count and the other datapath are measured.
func TestLostReplicaCountGivesUpItsCells(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *study.Study
		dp   string
	}{
		{"one datapath", roundsStudy(t, "trials=3", "budget=0s"), "calico-vxlan"},
		{"shared rounds", datapathsStudy(t, "datapaths=[bridge, macvlan]", "replicas=[1, 4]", "trials=3"), "macvlan"},
	} {
		e := newSetUpEngine()
		e.scaleErr = func(dp string, pods, _ int) error {
			if dp == tc.dp && pods == 4 {
				return errors.New("cannot allocate memory")
			}
			return nil
		}
		r, _, _ := setUpRun(t, tc.s, e, nil)
		if err := r.execute(context.Background()); err != nil {
			t.Fatalf("%s: %v; want the run to go on past the lost replica count", tc.name, err)
		}
		if n := e.scales[tc.dp+"/4"]; n != setUpAttempts {
			t.Errorf("%s: %d Scale calls to 4 pods, want 2 (then none: its cells were given up)", tc.name, n)
		}
		checkGivenUpAtSetUp(t, tc.s, loadRun(t, r), func(c results.Cell) bool { return c.Datapath == tc.dp && c.Replicas == 4 },
			tc.dp+": scale to 4 pod pairs: cannot allocate memory", 3)
	}
}

// What a set-up failure must not be retried nor given up past ends the
// run as before, having set up nothing again and recorded no cell given
// up: a cancelled run (SIGINT, SIGTERM), an engine's failed Up that left
// something behind, a node another run holds, a knob that would not
// revert, a teardown that failed.
func TestSetUpFailuresThatEndTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fails := func(name string, scope knob.Scope, undo error) knob.Entry {
		return knob.Entry{Name: name, Scope: scope, Wanted: func(*knob.Target) bool { return true },
			Apply: func(context.Context, *knob.Target) (knob.Undo, error) {
				return func() error { return undo }, fmt.Errorf("apply %s: EINVAL", name)
			}}
	}
	applies := func(name string, scope knob.Scope, undo error) knob.Entry {
		return knob.Entry{Name: name, Scope: scope, Wanted: func(*knob.Target) bool { return true },
			Apply: func(context.Context, *knob.Target) (knob.Undo, error) { return func() error { return undo }, nil }}
	}
	eio := errors.New("EIO")
	for _, tc := range []struct {
		name           string
		ctx            context.Context
		upErr          error
		knobs          []knob.Entry
		closeErr       error
		want           string
		ups, scales    int
		wantIs         error
		cancelDuringUp bool
	}{
		{name: "cancelled during Up", ctx: ctx, cancelDuringUp: true, want: "context canceled", ups: 1, wantIs: context.Canceled},
		{name: "Up left something", upErr: errors.Join(errors.New("connect nodes: EEXIST"), engine.LeftBehind(errors.New("delete netns cnb-1-node-server: EBUSY"))),
			want: "delete netns cnb-1-node-server: EBUSY", ups: 1, wantIs: engine.ErrLeftBehind},
		{name: "node busy", upErr: fmt.Errorf("claim node w1: %w", tune.ErrNodeBusy), want: "claim node w1", ups: 1, wantIs: tune.ErrNodeBusy},
		{name: "datapath knob not reverted", knobs: []knob.Entry{applies("a", knob.Datapath, eio), fails("b", knob.Datapath, nil)},
			want: "apply b: EINVAL", ups: 1},
		{name: "datapath knob failed, teardown failed", knobs: []knob.Entry{fails("b", knob.Datapath, nil)}, closeErr: errors.New("delete pods: unreachable"),
			want: "tear down calico-vxlan: delete pods: unreachable", ups: 1},
		{name: "pod knob not reverted", knobs: []knob.Entry{applies("a", knob.Pods, eio), fails("b", knob.Pods, nil)},
			want: "apply b: EINVAL", ups: 1, scales: 1},
	} {
		s := roundsStudy(t, "trials=3", "budget=0s")
		e := newSetUpEngine()
		e.closeErr = tc.closeErr
		e.upErr = func(string, int) error {
			if tc.cancelDuringUp {
				cancel()
				return fmt.Errorf("settle: %w", ctx.Err())
			}
			return tc.upErr
		}
		r, _, _ := setUpRun(t, s, e, tc.knobs)
		runCtx := tc.ctx
		if runCtx == nil {
			runCtx = context.Background()
		}
		err := r.execute(runCtx)
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
			t.Errorf("%s: %v; want the run ended with %q", tc.name, err, tc.want)
		}
		if tc.knobs != nil && tc.knobs[0].Name == "a" && !errors.Is(err, eio) {
			t.Errorf("%s: %v; want the revert's error said", tc.name, err)
		}
		if e.ups["calico-vxlan"] != tc.ups || e.scales["calico-vxlan/1"] != tc.scales {
			t.Errorf("%s: Up calls %v, Scale calls %v; want %d and %d: no attempt after it", tc.name, e.ups, e.scales, tc.ups, tc.scales)
		}
		if run := loadRun(t, r); len(run.Marked) != 0 || len(run.Stops) != 0 {
			t.Errorf("%s: marked %+v, stops %+v; want no cell given up", tc.name, run.Marked, run.Stops)
		}
	}
}

// A resumed run keeps the cells the interrupted run gave up at their
// set-up given up, as it keeps those whose trial failed every attempt:
// their datapath is not built for them again, their stop says the same
// why, and the other cells go on where they were cut.
func TestResumeKeepsCellsGivenUpAtSetUp(t *testing.T) {
	s := datapathsStudy(t, "datapaths=[bridge, macvlan]", "trials=3")
	e := newSetUpEngine()
	e.upErr = func(dp string, _ int) error {
		if dp == "macvlan" {
			return errors.New("macvlan: operation not supported")
		}
		return nil
	}
	cut, f, _ := setUpRun(t, s, e, nil)
	f.stop = 1 // killed in round 2, after bridge's first trial
	if err := cut.execute(context.Background()); !errors.Is(err, errInterrupted) {
		t.Fatalf("the interrupted run: %v", err)
	}
	old := loadRun(t, cut)
	if len(old.Samples) != 1 || len(old.Marked) != 1 {
		t.Fatalf("the interrupted run kept %d trials and %d marked attempts; want bridge's one and macvlan's set-up record", len(old.Samples), len(old.Marked))
	}
	w, err := results.Reopen(cut.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	e2 := newSetUpEngine()
	res, _, _ := setUpRun(t, s, e2, nil)
	res.out.Close()
	res.out, res.opt.Resume, res.opt.OutDir = w, true, w.Dir()
	if err := res.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	if err := res.execute(context.Background()); err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	if e2.ups["macvlan"] != 0 {
		t.Errorf("the resumed run built macvlan %d times; want its cells kept given up, nothing built for them", e2.ups["macvlan"])
	}
	checkGivenUpAtSetUp(t, s, loadRun(t, res), func(c results.Cell) bool { return c.Datapath == "macvlan" },
		"build cluster for macvlan: macvlan: operation not supported", 3)
}

// A study of one datapath (every kube run) whose cluster cannot be set
// up (Up, or its datapath knobs, failing both attempts) ends the run with
// the error, giving up no cell: its cells are every cell of the run, so
// there is nothing to go on with, and a failure at a resume that may
// have passed (a kube API server restarting, a node's network
// flapping) is left to another --resume. Before, every cell was given
// up: a new run ended as one that measured nothing (exit 1, no --resume
// offered), and a resumed one built its report and exited 0, every cell
// still to run given up for good. A replica count's set-up is still
// given up (TestLostReplicaCountGivesUpItsCells): the other counts go
// on.
func TestOnlyDatapathSetUpEndsTheRun(t *testing.T) {
	failing := knob.Entry{Name: "dp", Scope: knob.Datapath, Wanted: func(*knob.Target) bool { return true },
		Apply: func(context.Context, *knob.Target) (knob.Undo, error) {
			return func() error { return nil }, errors.New("apply dp: EINVAL")
		}}
	const dp = "calico-vxlan"
	for _, tc := range []struct {
		name    string
		upErr   error
		knobs   []knob.Entry
		resumed bool
		want    string
	}{
		{name: "cluster", upErr: errors.New("vxlan: operation not supported"),
			want: "datapath calico-vxlan: set-up failed 2 attempts, and the study has no other datapath to measure: build cluster for calico-vxlan: vxlan: operation not supported"},
		{name: "datapath knobs", knobs: []knob.Entry{failing},
			want: "datapath calico-vxlan: set-up failed 2 attempts, and the study has no other datapath to measure: datapath calico-vxlan: "},
		{name: "cluster, resumed", upErr: errors.New("Unauthorized"), resumed: true,
			want: "set-up failed 2 attempts, and the study has no other datapath to measure: build cluster for calico-vxlan: Unauthorized"},
	} {
		s := roundsStudy(t, "trials=3", "budget=0s", "replicas=[1, 4]")
		var r *run
		e := newSetUpEngine()
		if tc.resumed {
			cut, f, _ := setUpRun(t, s, newSetUpEngine(), nil)
			f.stop = 1 // killed in its second trial
			if err := cut.execute(context.Background()); !errors.Is(err, errInterrupted) {
				t.Fatalf("%s: the interrupted run: %v", tc.name, err)
			}
			r = resumeSetUp(t, s, cut, e)
		} else {
			r, _, _ = setUpRun(t, s, e, tc.knobs)
		}
		e.upErr = func(string, int) error { return tc.upErr }
		err := r.execute(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNothingMeasured) {
			t.Fatalf("%s: %v; want the run ended with %q", tc.name, err, tc.want)
		}
		if e.ups[dp] != setUpAttempts {
			t.Errorf("%s: %d Up calls, want %d", tc.name, e.ups[dp], setUpAttempts)
		}
		// As every run that ends with an error: exit 1, its partial
		// results kept (a resumed run's report built), the error said
		// (and by the command line, how to continue it).
		built := 0
		if ferr := finish(r.out.Dir(), r.samples > 0 || tc.resumed, err, func(string) error { built++; return nil }); ferr != err {
			t.Errorf("%s: the run ends with %v; want its error", tc.name, ferr)
		}
		run := loadRun(t, r)
		if len(run.Marked) != 0 {
			t.Errorf("%s: marked %+v; want no cell given up", tc.name, run.Marked)
		}
		for _, st := range run.Stops {
			if st.Failed != "" {
				t.Errorf("%s: stop %+v; want no cell given up", tc.name, st)
			}
		}
		if u := analysis.Unfinished(s, run); len(u) != len(s.Cells()) {
			t.Errorf("%s: unfinished cells %v; want all %d, left to a --resume", tc.name, u, len(s.Cells()))
		}
	}
}
