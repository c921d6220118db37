package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/version"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// datapathsStudy is an adaptive study of three datapaths and one tuning
// (rps-rfs quick reshaped), with no budget.
func datapathsStudy(t *testing.T, set ...string) *study.Study {
	t.Helper()
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	set = append([]string{"datapaths=[bridge, host, macvlan]", "tunings=[baseline]", "replicas=[1]", "budget=0s"}, set...)
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: set}, cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// What a cell is compared with follows the study: tunings with the
// baseline, datapaths with the first datapath, in any design (a fixed
// one is judged at its count, so that its stops carry the decisions;
// the margin stops cells only where min < max).
func TestDesignVersus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      *study.Study
		versus versus
		margin bool
	}{
		{"tunings, adaptive", roundsStudy(t), vsBaseline, true},
		{"datapaths, adaptive", datapathsStudy(t), vsFirstDatapath, true},
		{"datapaths, fixed", datapathsStudy(t, "trials=4"), vsFirstDatapath, true},
		{"tunings, fixed", roundsStudy(t, "trials=4"), vsBaseline, true},
		{"one datapath, one tuning", datapathsStudy(t, "datapaths=[bridge]"), vsNothing, false},
	} {
		d := newDesign(tc.s)
		if d.versus != tc.versus || (d.margin > 0) != tc.margin {
			t.Errorf("%s: versus %d margin %g; want %d, margin %v", tc.name, d.versus, d.margin, tc.versus, tc.margin)
		}
	}
	// A precision target without "of" is on the mean in a study of
	// datapaths (which has no normalized values), on the ratio to the
	// baseline in one of tunings decided against it.
	for _, tc := range []struct {
		s  *study.Study
		of adaptive.Of
	}{
		{datapathsStudy(t, "precision={halfWidth: 2%}"), adaptive.OfMean},
		{datapathsStudy(t, "precision={halfWidth: 2%}", "datapaths=[bridge]", "tunings=[baseline, rfs]"), adaptive.OfNormalized},
	} {
		if got := newDesign(tc.s).config("bitrate", 0).Precision.Of; got != tc.of {
			t.Errorf("%d datapaths, %d tunings: precision of %s, want %s", len(tc.s.Spec.Datapaths), len(tc.s.Spec.Tunings), got, tc.of)
		}
	}
}

// In an adaptive study of datapaths each cell stops once its paired
// comparison with the first datapath is decided: macvlan, 40% below
// bridge with 2% noise, is decided "worse" at the first look; host,
// spreading ±8% around bridge's level, stays open; bridge runs in
// every round either of them runs, and is compared with nothing. Every
// round runs the datapaths in the study's order.
func TestDatapathsStopOnTheirComparison(t *testing.T) {
	s := datapathsStudy(t)
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	noise := func(round, k int) float64 { return float64((round*7+k*3)%5-2) / 2 } // -1 .. 1
	level := map[string]struct{ mean, spread float64 }{"bridge": {100, 0.02}, "host": {100, 0.08}, "macvlan": {60, 0.02}}
	f := &fakeTrials{r: r, value: func(c results.Cell, round int) float64 {
		l := level[c.Datapath]
		return l.mean * (1 + l.spread*noise(round, len(c.Datapath)))
	}}
	var order []string
	on := func(_ context.Context, d study.Datapath, round int, plans map[int][]job) error {
		order = append(order, d.Name)
		return r.runJobs(plans[1], round, f.trial)
	}
	if err := r.sharedRounds(context.Background(), on); err != nil {
		t.Fatal(err)
	}
	stops := map[string]results.Stop{}
	for _, st := range r.stops {
		stops[st.Cell.Datapath] = st
	}
	if len(r.stops) != 3 {
		t.Fatalf("stops %+v", r.stops)
	}
	mv, host, bridge := stops["macvlan"], stops["host"], stops["bridge"]
	if mv.Decision != "worse" || mv.N != s.Spec.Trials.Min || mv.Versus != "bridge" || mv.Status != "target" {
		t.Errorf("macvlan: %+v; want worse than bridge at %d trials", mv, s.Spec.Trials.Min)
	}
	if host.N <= mv.N || host.Versus != "bridge" || host.Decision == "" {
		t.Errorf("host: %+v; want compared with bridge over more trials than macvlan", host)
	}
	if bridge.N != host.N || bridge.Decision != "" || bridge.Versus != "" {
		t.Errorf("bridge: %+v; want as many trials as host (%d) and no decision", bridge, host.N)
	}
	var want []string
	for round := 1; round <= bridge.N; round++ {
		for _, d := range s.Spec.Datapaths {
			if stops[d.Name].N >= round {
				want = append(want, d.Name)
			}
		}
	}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("datapaths ran in the order %v, want %v", order, want)
	}
	if len(f.ran) != bridge.N+host.N+mv.N {
		t.Errorf("ran %d trials, stops count %d", len(f.ran), bridge.N+host.N+mv.N)
	}
}

// A fixed design runs every cell its count and judges each against the
// first datapath once, on all its trials at 95%: its stops carry the
// decisions the report shows, for the run's end to list.
func TestFixedDesignDecides(t *testing.T) {
	s := datapathsStudy(t, "trials=4")
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	noise := func(round, k int) float64 { return float64((round*7+k*3)%5-2) / 2 } // -1 .. 1
	mean := map[string]float64{"bridge": 100, "host": 100, "macvlan": 60}
	f := &fakeTrials{r: r, value: func(c results.Cell, round int) float64 {
		return mean[c.Datapath] * (1 + 0.02*noise(round, len(c.Datapath)))
	}}
	on := func(_ context.Context, d study.Datapath, round int, plans map[int][]job) error {
		return r.runJobs(plans[1], round, f.trial)
	}
	if err := r.sharedRounds(context.Background(), on); err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 12 || len(r.stops) != 3 {
		t.Fatalf("ran %d trials, %d stops; want 12 and 3", len(f.ran), len(r.stops))
	}
	for _, st := range r.stops {
		want := map[string]string{"bridge": "", "host": "equal", "macvlan": "worse"}[st.Cell.Datapath]
		if st.N != 4 || st.Decision != want || want != "" && (st.Versus != "bridge" || st.Confidence != 0.95 || st.Look != 4) {
			t.Errorf("%s: %+v; want 4 trials, decision %q against bridge at 95%% after 4", st.Cell.Datapath, st, want)
		}
	}
}

// A run of datapaths in shared rounds, interrupted and resumed, runs
// exactly the trials of the uninterrupted run and ends with its stops:
// planning a round over the datapaths depends only on the rounds before
// it and on the budget spent, which the resumed run replays (the
// budget stops cells of both replica counts in different rounds).
func TestSharedRoundsResume(t *testing.T) {
	s := datapathsStudy(t, "replicas=[1, 4]", "budget=90s")
	value := func(c results.Cell, round int) float64 {
		k := len(c.Datapath) + c.Replicas
		return 100 * (1 + 0.06*float64((round*7+k*3)%5-2)/2)
	}
	var log bytes.Buffer
	runAll := func(r *run, f *fakeTrials) error {
		f.value = value
		return r.sharedRounds(context.Background(), func(_ context.Context, _ study.Datapath, round int, plans map[int][]job) error {
			for _, reps := range r.study.Spec.Replicas {
				if err := r.runJobs(plans[reps], round, f.trial); err != nil {
					return err
				}
			}
			return nil
		})
	}
	whole := newRoundsRun(t, s, t.TempDir(), &log)
	all := &fakeTrials{r: whole}
	if err := runAll(whole, all); err != nil {
		t.Fatal(err)
	}
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	part := &fakeTrials{r: cut, stop: len(all.ran) / 2}
	if err := runAll(cut, part); !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	res := resumeFrom(t, cut, &log, nil)
	rest := &fakeTrials{r: res}
	if err := runAll(res, rest); err != nil {
		t.Fatal(err)
	}
	got := append(append([]trialKey{}, part.ran...), rest.ran...)
	if fmt.Sprint(got) != fmt.Sprint(all.ran) {
		t.Errorf("interrupted and resumed ran\n%v\nuninterrupted\n%v", got, all.ran)
	}
	if want, have := stopsByCell(whole.stops), stopsByCell(res.stops); fmt.Sprint(want) != fmt.Sprint(have) {
		t.Errorf("stops: resumed %v, uninterrupted %v", have, want)
	}
	if len(whole.stops) != 6 || !strings.Contains(fmt.Sprint(stopsByCell(whole.stops)), "budget n=2") {
		t.Errorf("stops %v: want 6, some stopped by the budget after 2 trials (the test's point)", stopsByCell(whole.stops))
	}
}

// runShared runs r's shared rounds with f's fake trials, every replica
// count of a datapath in its round.
func runShared(r *run, f *fakeTrials) error {
	return r.sharedRounds(context.Background(), func(_ context.Context, _ study.Datapath, round int, plans map[int][]job) error {
		for _, reps := range r.study.Spec.Replicas {
			if err := r.runJobs(plans[reps], round, f.trial); err != nil {
				return err
			}
		}
		return nil
	})
}

// decidedAtFour gives the 4-replica cells values that decide them at the
// first look (macvlan 40% below bridge, host equal) and the 1-replica
// cells ±6% that keep them running: the 4-replica block finishes while
// the other goes on.
func decidedAtFour(c results.Cell, round int) float64 {
	k := len(c.Datapath) + c.Replicas
	if c.Replicas == 4 {
		m := map[string]float64{"bridge": 100, "host": 100, "macvlan": 60}[c.Datapath]
		return m * (1 + 0.002*float64((round*7+k*3)%5-2))
	}
	return 100 * (1 + 0.06*float64((round*7+k*3)%5-2)/2)
}

// In the round where one block finishes on its own, the budget left is
// shared by the blocks that go on: a cell is not stopped on the budget
// while what is left pays for its trial and its baseline's. Before, the
// finishing block took a share of that round too; host and macvlan at
// 1 replica stopped "the remaining budget 7s cannot pay for another
// trial (10s)" with 13.1 s left, and the run ended with it unspent.
func TestSharedBudgetGoesToRunningBlocks(t *testing.T) {
	s := datapathsStudy(t, "replicas=[1, 4]", "budget=104s")
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	f := &fakeTrials{r: r, value: decidedAtFour}
	if err := runShared(r, f); err != nil {
		t.Fatal(err)
	}
	left := s.Spec.Budget.Duration - r.spent()
	budgetStops := 0
	for _, st := range r.stops {
		if st.Status != string(adaptive.Budget) {
			continue
		}
		budgetStops++
		pair := r.cellLog(st.Cell).meanWall() + r.cellLog(results.Cell{Datapath: "bridge", Tuning: st.Cell.Tuning,
			Workload: st.Cell.Workload, Replicas: st.Cell.Replicas}).meanWall()
		if st.Cell.Datapath != "bridge" && left >= pair {
			t.Errorf("%s stopped on the budget (%s) with %s of it left, enough for its trial and bridge's (%s)",
				cellID(st.Cell), st.Reason, left.Round(100*time.Millisecond), pair.Round(100*time.Millisecond))
		}
	}
	if budgetStops == 0 {
		t.Errorf("no cell stopped on the budget (the test's point): %v", stopsByCell(r.stops))
	}
}

// A resumed run of shared rounds replays every trial the interrupted run
// counted, in its round, whatever its own plan says, so stops.json's n
// agrees with samples.jsonl and every counted trial's machine time is
// spent; and it ends with a stop for the same cells. Its plan may differ
// from the uninterrupted run's where a block finished before the cut
// (its stops and machine time are taken at once): before, a resumed
// run with --budget 112s stopped bridge at 1 replica after 4 trials
// though the interrupted run had counted its fifth.
func TestSharedResumeReplaysCountedTrials(t *testing.T) {
	var log bytes.Buffer
	for _, budget := range []string{"96s", "104s", "112s", "120s", "150s"} {
		s := datapathsStudy(t, "replicas=[1, 4]", "budget="+budget)
		whole := newRoundsRun(t, s, t.TempDir(), &log)
		all := &fakeTrials{r: whole, value: decidedAtFour}
		if err := runShared(whole, all); err != nil {
			t.Fatal(err)
		}
		for cutAt := 1; cutAt < len(all.ran); cutAt++ {
			cut := newRoundsRun(t, s, t.TempDir(), &log)
			part := &fakeTrials{r: cut, stop: cutAt, value: decidedAtFour}
			if err := runShared(cut, part); !errors.Is(err, errInterrupted) {
				t.Fatalf("budget %s, cut after %d: %v", budget, cutAt, err)
			}
			res := resumeFrom(t, cut, &log, nil)
			rest := &fakeTrials{r: res, value: decidedAtFour}
			if err := runShared(res, rest); err != nil {
				t.Fatal(err)
			}
			for k := range res.prev {
				if res.done[k] {
					t.Errorf("budget %s, cut after %d: %s trial %d counted before the cut, never replayed", budget, cutAt, cellID(k.cell), k.trial)
				}
			}
			counted := map[results.Cell]int{}
			for _, k := range append(append([]trialKey{}, part.ran...), rest.ran...) {
				counted[k.cell]++
			}
			if len(res.stops) != len(whole.stops) {
				t.Errorf("budget %s, cut after %d: %d stops, uninterrupted %d", budget, cutAt, len(res.stops), len(whole.stops))
			}
			for _, st := range res.stops {
				if st.N != counted[st.Cell] {
					t.Errorf("budget %s, cut after %d: %s stopped at n=%d, %d trials counted", budget, cutAt, cellID(st.Cell), st.N, counted[st.Cell])
				}
			}
		}
	}
}

// The start of a run says how its cells are repeated and on what an
// adaptive cell stops.
func TestDescribeDesign(t *testing.T) {
	for _, tc := range []struct {
		s    *study.Study
		want string
	}{
		{datapathsStudy(t, "trials={min: 3, max: 10}", "precision={halfWidth: 2%, of: mean}"),
			"adaptive, 3 to 10 trials per cell; a cell stops once the 95% interval of the mean of its headline metric is within ±2% " +
				"or it is decided against the first datapath, bridge (better, worse, or equal within ±5%)"},
		{roundsStudy(t), "adaptive, 3 to 10 trials per cell; a cell stops once it is decided against the baseline tuning, baseline " +
			"(better, worse, or equal within ±5%); the run stops when its budget of 4m30s is spent"},
		{datapathsStudy(t, "trials=3", "precision={halfWidth: 2%, metric: bitrate}"),
			"3 trials per cell; each cell is judged at 95% over all its trials against the first datapath, bridge " +
				"(better, worse, or equal within ±5%); the report says for each cell whether the 95% interval of the mean of bitrate is within ±2%"},
		{datapathsStudy(t, "trials=3", "datapaths=[bridge]"), "3 trials per cell"},
		// One trial judges nothing: said, not promised.
		{datapathsStudy(t, "trials=1"), "1 trial per cell: no intervals, so nothing is judged or decided " +
			"(--set trials=3, or a range such as 'trials={min: 3, max: 6}', decides)"},
		{datapathsStudy(t, "trials=1", "datapaths=[bridge]"), "1 trial per cell"},
	} {
		r := &run{study: tc.s, design: newDesign(tc.s)}
		if got := r.describe(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// spec.only runs the cells its selectors pick and the baseline cells
// they are compared with, nothing else: no other tuning, replica count
// or datapath, and a datapath with no cell at a replica count is not
// built for it. The study's cell list and plan count the same cells.
func TestOnlyRunsSelectedCells(t *testing.T) {
	s := datapathsStudy(t, "datapaths=[bridge, macvlan]", "tunings=[baseline, rps, rfs]", "replicas=[1, 4]", "trials=2",
		"only=[{datapath: macvlan, tuning: rps, replicas: 1}, {tuning: rfs, replicas: 4}]")
	cell := func(dp, tn string, reps int) results.Cell {
		return results.Cell{Datapath: dp, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: reps}
	}
	want := []results.Cell{cell("bridge", "baseline", 4), cell("bridge", "rfs", 4),
		cell("macvlan", "baseline", 1), cell("macvlan", "rps", 1), cell("macvlan", "baseline", 4), cell("macvlan", "rfs", 4)}
	if got := s.Cells(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("cells %v, want %v", got, want)
	}
	if p := s.Plan(); p.Cells != 6 {
		t.Errorf("plan counts %g cells, want 6", p.Cells)
	}
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	f := &fakeTrials{r: r}
	built := map[string]bool{}
	on := func(_ context.Context, d study.Datapath, round int, plans map[int][]job) error {
		for reps, jobs := range plans {
			built[fmt.Sprintf("%s r=%d", d.Name, reps)] = true
			if err := r.runJobs(jobs, round, f.trial); err != nil {
				return err
			}
		}
		return nil
	}
	if err := r.sharedRounds(context.Background(), on); err != nil {
		t.Fatal(err)
	}
	ran := map[results.Cell]int{}
	for _, k := range f.ran {
		ran[k.cell]++
	}
	if len(ran) != len(want) {
		t.Errorf("ran %v, want the 6 cells", ran)
	}
	for _, c := range want {
		if ran[c] != 2 {
			t.Errorf("%v ran %d trials, want 2", c, ran[c])
		}
	}
	if built["bridge r=1"] || !built["macvlan r=1"] || !built["bridge r=4"] {
		t.Errorf("datapaths built at %v: bridge has no cell at 1 pair", built)
	}
	for _, st := range r.stops {
		if st.Cell.Tuning != "baseline" && (st.Versus != "baseline" || st.Decision == "") {
			t.Errorf("stop %+v: want decided against its baseline", st)
		}
	}
}

// scaleCluster records the pod counts it is scaled to.
type scaleCluster struct{ scaled *[]int }

func (c scaleCluster) Server() engine.Node { return nil }
func (c scaleCluster) Client() engine.Node { return nil }
func (c scaleCluster) Scale(_ context.Context, n int) ([]engine.Pod, []engine.Pod, error) {
	*c.scaled = append(*c.scaled, n)
	return nil, nil, nil
}
func (c scaleCluster) Close() error { return nil }

// A replica count's pods are what its selected cells need: a background
// load of 20 pairs that spec.only leaves out is not built.
func TestOnlyScalesForSelectedCells(t *testing.T) {
	for _, tc := range []struct {
		only string
		want int
	}{{"only=[{workload: tcp}]", 1}, {"only=[{workload: bg}]", 21}} {
		s := datapathsStudy(t, "datapaths=[bridge]", "trials=1", "workloads=[{name: tcp, tool: iperf3}, {name: bg, tool: iperf3, background: {connections: [10], pairs: 20, rate: 1M}}]", tc.only)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		var scaled []int
		d := s.Spec.Datapaths[0]
		tgt := &knob.Target{Study: s, Cluster: scaleCluster{&scaled}, Datapath: d, Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true}
		if err := r.atReplicas(context.Background(), scaleCluster{&scaled}, 1, tgt, func() error { return nil }, notLost); err != nil {
			t.Fatal(err)
		}
		if len(scaled) != 1 || scaled[0] != tc.want {
			t.Errorf("%s: scaled to %v pods, want %d", tc.only, scaled, tc.want)
		}
	}
}

// A resumed run of shared rounds whose remaining rounds the interrupted
// run had all counted (killed after its last trial, before stops.json)
// builds no cluster, so writeEnv never runs; its stops still write
// env.json. That env.json keeps the interrupted run's environment with
// the machine time updated. Before, it was overwritten with an empty
// one (engine "", host "", ...), and a later --resume was refused for
// engine "".
func TestSharedResumeWithNothingToMeasureKeepsEnv(t *testing.T) {
	s := datapathsStudy(t, "replicas=[1, 4]")
	here := envinfo.Collect(nil)
	env := results.Env{Tool: "cnibench", Engine: "stub", Version: version.Version, RunID: "r1", Hostname: here.Hostname,
		Kernel: here.Kernel, CPUModel: here.CPUModel, CPUs: here.CPUs, Tools: map[string]string{"recorded-tool": "3.16"}}
	dir := t.TempDir()
	cut := newRoundsRun(t, s, dir, &bytes.Buffer{})
	cut.env = env // as writeEnv left it at the first cluster
	if err := cut.out.WriteEnv(env); err != nil {
		t.Fatal(err)
	}
	if err := runShared(cut, &fakeTrials{r: cut, value: decidedAtFour}); err != nil {
		t.Fatal(err)
	}
	cut.out.Close()
	// Killed after its last trial's sample, before its stops: the
	// resumed run replays every trial and runs none.
	if err := os.Remove(filepath.Join(dir, results.StopsFile)); err != nil {
		t.Fatal(err)
	}
	old, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	res := &run{study: s, design: newDesign(s), done: map[trialKey]bool{}, began: time.Now(), out: w, engine: stubEngine{},
		opt: Options{Progress: progress.New(&bytes.Buffer{}), Resume: true, OutDir: dir}, plan: &plan{machine: cpuset.Range(4)}}
	if err := res.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	// stubEngine's Up panics: no cluster may be built.
	if err := res.interleaved(context.Background()); err != nil {
		t.Fatal(err)
	}
	if res.clusters != 0 || len(res.stops) != len(s.Cells()) {
		t.Fatalf("built %d clusters, %d stops: want none built and a stop per cell (the test's point)", res.clusters, len(res.stops))
	}
	got, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Env
	if e.Engine != "stub" || e.Version != version.Version || e.Hostname != here.Hostname || e.Kernel != here.Kernel ||
		e.CPUs != here.CPUs || e.Tools["recorded-tool"] != "3.16" || e.MachineS <= 0 {
		t.Errorf("env.json after the resumed run = %+v; want the interrupted run's environment, machine_s set", e)
	}
	if !slices.Contains(e.Notes, res.resumed) {
		t.Errorf("env.json's notes %q: want the resume said", e.Notes)
	}
	if err := sameBuild(e, "stub"); err != nil {
		t.Errorf("a second --resume would be refused: %v", err)
	}
}
