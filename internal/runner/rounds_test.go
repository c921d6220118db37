package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// roundsStudy is rps-rfs --quick: adaptive, with a margin and a budget.
func roundsStudy(t *testing.T, set ...string) *study.Study {
	t.Helper()
	cat := study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()}
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: set}, cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newRoundsRun is a run of s writing its files to a new directory, with
// no engine: blocks run through a fake trial.
func newRoundsRun(t *testing.T, s *study.Study, dir string, log *bytes.Buffer) *run {
	t.Helper()
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy(b); err != nil {
		t.Fatal(err)
	}
	return &run{study: s, design: newDesign(s), done: map[trialKey]bool{}, began: time.Now(), out: w,
		opt: Options{Progress: progress.New(log)}, plan: &plan{machine: cpuset.Range(4)}}
}

// blockUnits are the cells of the study's first variant at one replica
// count, as cellsAt lists them.
func blockUnits(s *study.Study, reps int) []unit {
	var out []unit
	w := s.Variants()[0]
	for _, tn := range s.Spec.Tunings {
		c := results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: tn.Name, Workload: w.Name, Replicas: reps}
		out = append(out, unit{cell: c, tuning: tn, work: w})
	}
	return out
}

var errInterrupted = errors.New("interrupted")

// fakeTrials stands in for runUnit: it records what runUnit would (the
// sample with its times, the cell's value and trial time) and advances
// the run's clock (prior) by the trial's machine time. Values vary ±10%
// around the same mean, out of step between tunings, so cells stay
// undecided and the budget stops them; a cell in broken fails every
// attempt; after stop trials it
// returns errInterrupted, as a killed run stops.
type fakeTrials struct {
	r      *run
	broken map[string]bool
	stop   int
	ran    []trialKey
	// value, when set, gives a trial's value instead.
	value func(c results.Cell, round int) float64
	// disturb is how many times a trial's attempt comes out disturbed
	// before one counts (runUnit's errAgain).
	disturb map[trialKey]int
}

func (f *fakeTrials) trial(u unit, round int) (time.Duration, error) {
	r, k := f.r, trialKey{u.cell, round}
	if f.stop > 0 && len(f.ran) >= f.stop {
		return 0, errInterrupted
	}
	f.ran = append(f.ran, k)
	pause := r.pauseTime()
	d := r.study.Spec.Duration.Duration + time.Duration(len(u.cell.Tuning))*100*time.Millisecond
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(r.prior)
	l := r.cellLog(u.cell)
	if f.disturb[k] > 0 {
		f.disturb[k]--
		r.prior += d + pause
		return d + pause, errAgain
	}
	if f.broken[u.cell.Tuning] {
		var cost time.Duration
		for a := 1; a <= study.MaxRetries+1; a++ {
			s := results.Sample{Cell: u.cell, Trial: round, Attempt: a, Start: start, End: start.Add(time.Second),
				Metrics: map[string]float64{}, Error: "iperf3 died", Discarded: "failed"}
			if err := r.out.AppendSample(s); err != nil {
				return 0, err
			}
			cost += time.Second + pause
		}
		l.failed = "trial failed every attempt"
		l.values[round] = math.NaN()
		r.prior += cost
		return cost, nil
	}
	v := 100 * (1 + 0.05*float64((round*7+len(u.cell.Tuning)*3)%5-2))
	if f.value != nil {
		v = f.value(u.cell, round)
	}
	s := results.Sample{Cell: u.cell, Trial: round, Attempt: 1, Start: start, End: start.Add(d),
		Metrics: map[string]float64{r.metricOf(u.work): v}}
	if err := r.out.AppendSample(s); err != nil {
		return 0, err
	}
	l.values[round] = v
	l.wall = append(l.wall, d+pause)
	r.overhead += d - r.study.Spec.Duration.Duration
	r.trialsRun++
	r.prior += d + pause
	return d + pause, nil
}

// runBlocks runs the study's replica counts as blocks, as datapath does.
func runBlocks(r *run, f *fakeTrials) error {
	for _, reps := range r.study.Spec.Replicas {
		if err := r.block(blockUnits(r.study, reps), f.trial); err != nil {
			return err
		}
	}
	return nil
}

// resumeFrom is a new run resuming the interrupted run cut from its
// directory (set, if given, adjusts it before it reads the old run).
func resumeFrom(t *testing.T, cut *run, log *bytes.Buffer, set func(*run)) *run {
	t.Helper()
	cut.out.Close()
	old, err := results.Load(cut.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	res := newRoundsRun(t, cut.study, t.TempDir(), log)
	if set != nil {
		set(res)
	}
	res.restore(old)
	return res
}

func stopsByCell(stops []results.Stop) map[results.Cell]string {
	out := map[results.Cell]string{}
	for _, s := range stops {
		out[s.Cell] = fmt.Sprintf("%s n=%d: %s", s.Status, s.N, s.Reason)
	}
	return out
}

// A run interrupted inside its second block and resumed runs exactly the
// trials the uninterrupted run would have run and no other, and ends
// with the same stops: the resumed run counts the interrupted run's
// machine time block by block, as that run spent it, and keeps the
// stops of the blocks it finished (before, the resumed run saw a fresh
// budget and ran more trials in blocks already finished).
func TestResumePlansAsTheInterruptedRun(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 150 * time.Second // the budget stops cells in both blocks
	var log bytes.Buffer
	whole := newRoundsRun(t, s, t.TempDir(), &log)
	all := &fakeTrials{r: whole}
	if err := runBlocks(whole, all); err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, k := range all.ran {
		if k.cell.Replicas == s.Spec.Replicas[0] {
			first++
		}
	}
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	part := &fakeTrials{r: cut, stop: first + 5}
	if err := runBlocks(cut, part); !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	res := resumeFrom(t, cut, &log, nil)
	rest := &fakeTrials{r: res}
	if err := runBlocks(res, rest); err != nil {
		t.Fatal(err)
	}
	if got, want := len(part.ran)+len(rest.ran), len(all.ran); got != want {
		t.Errorf("interrupted %d + resumed %d trials, uninterrupted %d", len(part.ran), len(rest.ran), want)
	}
	ran := map[trialKey]bool{}
	for _, k := range part.ran {
		ran[k] = true
	}
	for _, k := range rest.ran {
		if ran[k] {
			t.Errorf("%s trial %d ran again after resuming", cellID(k.cell), k.trial)
		}
		ran[k] = true
	}
	for _, k := range all.ran {
		if !ran[k] {
			t.Errorf("%s trial %d: the uninterrupted run ran it, the resumed one did not", cellID(k.cell), k.trial)
		}
	}
	want, got := stopsByCell(whole.stops), stopsByCell(res.stops)
	for c, w := range want {
		if got[c] != w {
			t.Errorf("%s: resumed %q, uninterrupted %q", cellID(c), got[c], w)
		}
	}
}

// What the interrupted run's tunings set is kept for the resumed run's
// env.json, and a trial's record adds to it (recordTuning).
func TestResumeKeepsTuningRecord(t *testing.T) {
	s := roundsStudy(t)
	var log bytes.Buffer
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	node := results.TuningSetting{Where: results.WhereNode, Knob: "rps_cpus", Value: "3", Devices: []string{"eth1"}, Found: []string{"0"}}
	if err := cut.recordTuning("rps", []results.TuningSetting{node}); err != nil {
		t.Fatal(err)
	}
	res := resumeFrom(t, cut, &log, nil)
	res.env.Tunings = res.priorTunings // as writeEnv starts it
	pod := node
	pod.Where, pod.Devices = results.WherePods, []string{"eth0"}
	if err := res.recordTuning("rps", []results.TuningSetting{pod}); err != nil {
		t.Fatal(err)
	}
	if got := res.env.Tunings["rps"]; len(got) != 2 || got[0].Where != results.WhereNode || got[1].Where != results.WherePods {
		t.Errorf("resumed run's record of rps: %+v, want the node's from before and the pods'", got)
	}
	// A tuning whose first trial found everything in place is warned of.
	held := results.TuningSetting{Where: results.WhereClientNode, Knob: "net.ipv4.tcp_congestion_control", Value: "bbr", Found: []string{"bbr"}, Unchanged: true}
	if err := res.recordTuning("bbr", []results.TuningSetting{held}); err != nil {
		t.Fatal(err)
	}
	want := "tuning bbr changes nothing on this machine: net.ipv4.tcp_congestion_control = bbr (client-node) already held"
	if !slices.ContainsFunc(res.env.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) || strings.Contains(strings.Join(res.env.Notes, "\n"), "tuning rps changes") {
		t.Errorf("notes %q, want one starting %q and none for rps", res.env.Notes, want)
	}
}

// A block that starts with the budget spent runs nothing, warns, and
// records its cells as not measured with the reason.
func TestBudgetSpentBeforeBlock(t *testing.T) {
	s := roundsStudy(t)
	var log bytes.Buffer
	r := newRoundsRun(t, s, t.TempDir(), &log)
	r.prior = s.Spec.Budget.Duration
	f := &fakeTrials{r: r}
	if err := r.block(blockUnits(s, s.Spec.Replicas[0]), f.trial); err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 0 {
		t.Errorf("ran %d trials over a spent budget", len(f.ran))
	}
	if !strings.Contains(log.String(), "warning: ") || !strings.Contains(log.String(), notMeasured) {
		t.Errorf("no warning: %q", log.String())
	}
	if len(r.stops) != len(s.Spec.Tunings) {
		t.Fatalf("stops %+v", r.stops)
	}
	for _, st := range r.stops {
		if st.N != 0 || st.Status != "budget" || st.Failed != notMeasured {
			t.Errorf("%s: %+v; want not measured: %s", cellID(st.Cell), st, notMeasured)
		}
	}
}

// A cell given up at its first trial stops as failed, and its baseline
// runs no round for it alone: at most as many trials as its live cells.
func TestGivenUpCellLeavesBaseline(t *testing.T) {
	s := roundsStudy(t)
	var log bytes.Buffer
	r := newRoundsRun(t, s, t.TempDir(), &log)
	r.design.budget = 0
	broken := s.Spec.Tunings[1].Name
	f := &fakeTrials{r: r, broken: map[string]bool{broken: true}}
	if err := r.block(blockUnits(s, s.Spec.Replicas[0]), f.trial); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, k := range f.ran {
		n[k.cell.Tuning]++
	}
	most := 0
	for tn, c := range n {
		if tn != s.Spec.Baseline && tn != broken {
			most = max(most, c)
		}
	}
	if n[broken] != 1 || n[s.Spec.Baseline] > most {
		t.Errorf("trials per tuning %v: want %s once, %s at most %d", n, broken, s.Spec.Baseline, most)
	}
	for _, st := range r.stops {
		if st.Cell.Tuning == broken && (st.Status != "failed" || st.Failed == "") {
			t.Errorf("given-up cell's stop: %+v", st)
		}
	}
}

// A resumed run keeps a cell given up as given up (it is not tried
// again) and goes on with a trial the interruption cut short after its
// recorded attempts, not from attempt 1.
func TestResumeKeepsGivenUpCell(t *testing.T) {
	s := roundsStudy(t)
	var log bytes.Buffer
	cut := newRoundsRun(t, s, t.TempDir(), &log)
	cut.design.budget = 0
	broken := s.Spec.Tunings[1].Name
	part := &fakeTrials{r: cut, broken: map[string]bool{broken: true}, stop: 2 * len(s.Spec.Tunings)}
	units := blockUnits(s, s.Spec.Replicas[0])
	if err := cut.block(units, part.trial); !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	live := units[2].cell
	if err := cut.out.AppendSample(results.Sample{Cell: live, Trial: 3, Attempt: 1, Error: "iperf3 died", Discarded: "failed"}); err != nil {
		t.Fatal(err)
	}
	res := resumeFrom(t, cut, &log, func(r *run) { r.design.budget = 0 })
	if f, _, first := res.attemptsBefore(trialKey{live, 3}); f != 1 || first != 2 {
		t.Errorf("trial 3 of %s resumes at attempt %d with %d failures; want 2 and 1", cellID(live), first, f)
	}
	rest := &fakeTrials{r: res}
	if err := res.block(units, rest.trial); err != nil {
		t.Fatal(err)
	}
	for _, k := range rest.ran {
		if k.cell.Tuning == broken {
			t.Errorf("given-up %s tried again at trial %d", cellID(k.cell), k.trial)
		}
	}
	for _, st := range res.stops {
		if st.Cell.Tuning == broken && (st.Status != "failed" || !strings.Contains(st.Failed, "failed 3 attempts")) {
			t.Errorf("given-up cell's stop after resuming: %+v", st)
		}
	}
}

// TestFreshPods: a cell's first trial on a cluster's pods records their
// set-up, and so does another attempt at that trial; later trials on the
// same pods do not; a new cluster (the next round of a run of several
// datapaths, or a resumed run) makes its pods fresh again.
func TestFreshPods(t *testing.T) {
	r := &run{clusters: 1}
	c := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	other := c
	other.Replicas = 4
	steps := []struct {
		newCluster bool
		cell       results.Cell
		trial      int
		want       bool
	}{
		{false, c, 1, true}, {false, c, 1, true}, {false, c, 2, false}, {false, other, 1, true},
		{true, c, 3, true}, {false, c, 4, false}, {false, other, 2, true}, {true, c, 5, true},
	}
	for i, st := range steps {
		if st.newCluster {
			r.clusters++
		}
		if got := r.freshPods(st.cell, st.trial); got != st.want {
			t.Errorf("step %d (%+v): fresh %v, want %v", i, st, got, st.want)
		}
	}
}

// TestStopsInCellOrder: blocks of a run of several datapaths finish in
// the round each is decided, but stops.json lists the cells in the
// study's order, as the report's repetitions table shows them.
func TestStopsInCellOrder(t *testing.T) {
	s := roundsStudy(t)
	dir := t.TempDir()
	r := newRoundsRun(t, s, dir, &bytes.Buffer{})
	cells := s.Cells()
	for _, i := range []int{len(cells) - 1, 2, 0, 1} {
		r.stops = append(r.stops, results.Stop{Cell: cells[i], Status: "max"})
	}
	if err := r.writeStops(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, results.StopsFile))
	if err != nil {
		t.Fatal(err)
	}
	var got []results.Stop
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []results.Cell{cells[0], cells[1], cells[2], cells[len(cells)-1]}
	for i := range want {
		if i >= len(got) || got[i].Cell != want[i] {
			t.Fatalf("stops.json order %v, want %v", got, want)
		}
	}
}

// A cell that ends undecided after a look says about how many trials
// would decide it (stops.json's trials_to_decide); a decided cell does
// not. The fake trials spread ±10% out of step between tunings, so
// without a budget most cells end futile.
func TestStopsSayTrialsToDecide(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 0
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	r.design = newDesign(s)
	if err := runBlocks(r, &fakeTrials{r: r}); err != nil {
		t.Fatal(err)
	}
	undecided := 0
	for _, st := range r.stops {
		switch {
		case st.Decision == "undecided" && st.Look > 0:
			undecided++
			if st.ToDecide <= st.Look {
				t.Errorf("%v undecided after %d trials: trials to decide %d", st.Cell, st.N, st.ToDecide)
			}
		case st.ToDecide != 0:
			t.Errorf("%v %q: trials to decide %d, want none", st.Cell, st.Decision, st.ToDecide)
		}
	}
	if undecided == 0 {
		t.Fatalf("no undecided cell to check: %+v", r.stops)
	}
}

// A trial the noise guard found disturbed runs again after the round's
// other trials, as often as it comes out disturbed, and before the next
// round; its machine time counts each time.
func TestDisturbedTrialRunsAgainAtTheRoundsEnd(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Trials = study.Fixed(2)
	var log bytes.Buffer
	r := newRoundsRun(t, s, t.TempDir(), &log)
	r.design.budget = 0
	units := blockUnits(s, s.Spec.Replicas[0])
	first, second := units[0].cell, units[1].cell
	f := &fakeTrials{r: r, disturb: map[trialKey]int{{first, 1}: 2, {second, 1}: 1}}
	if err := r.block(units, f.trial); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, k := range f.ran {
		order = append(order, fmt.Sprintf("%s/%d", k.cell.Tuning, k.trial))
	}
	var want []string
	for _, u := range units {
		want = append(want, u.cell.Tuning+"/1")
	}
	// first and second again after the round, then first once more.
	want = append(want, first.Tuning+"/1", second.Tuning+"/1", first.Tuning+"/1")
	for _, u := range units {
		want = append(want, u.cell.Tuning+"/2")
	}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("order\n%s\nwant\n%s", strings.Join(order, " "), strings.Join(want, " "))
	}
	if r.spent() < time.Duration(len(f.ran))*s.Spec.Duration.Duration {
		t.Errorf("spent %s for %d attempts of %s", r.spent(), len(f.ran), s.Spec.Duration.Duration)
	}
}

// A trial run again continues its attempts' numbers and the noise
// guard's repeat count from where its disturbed attempt left them.
func TestRunAgainContinuesAttempts(t *testing.T) {
	r := &run{}
	k := trialKey{results.Cell{Tuning: "rps"}, 3}
	if f, rep, first := r.attemptsBefore(k); f != 0 || rep != 0 || first != 1 {
		t.Errorf("a fresh trial: %d %d %d", f, rep, first)
	}
	r.again = map[trialKey]attemptsSoFar{k: {failures: 1, repeats: 1, next: 3}}
	if f, rep, first := r.attemptsBefore(k); f != 1 || rep != 1 || first != 3 {
		t.Errorf("run again: failures %d repeats %d first attempt %d, want 1 1 3", f, rep, first)
	}
	if _, ok := r.again[k]; ok {
		t.Error("the state was kept after it was taken")
	}
}

// The cells of a study's impairments differ by the impairment alone: the
// lines naming a cell (progress, disturbed and failed attempts) said
// "flannel-vxlan udp@1500M baseline r=1 trial 2" for each of five.
func TestCellNamesSayImpairment(t *testing.T) {
	c := results.Cell{Datapath: "flannel-vxlan", Workload: "udp@1500M", Tuning: "baseline", Replicas: 1, Impairment: "delay-low"}
	if got := cellID(c); got != "flannel-vxlan/udp@1500M/baseline/r1/delay-low" {
		t.Errorf("cellID = %q", got)
	}
	if got := impairedBy(c, " "); got != " delay-low" {
		t.Errorf("impairedBy = %q", got)
	}
	c.Impairment = ""
	if got := cellID(c) + impairedBy(c, " "); got != "flannel-vxlan/udp@1500M/baseline/r1" {
		t.Errorf("unimpaired: %q", got)
	}
}

// Each write of stops.json records in env.json what the budget paid so
// far (a resumed run's earlier part included), from which the report
// says what budget a study's minimum needs.
func TestStopsRecordMachineTime(t *testing.T) {
	s := roundsStudy(t)
	dir := filepath.Join(t.TempDir(), "run")
	r := newRoundsRun(t, s, dir, &bytes.Buffer{})
	r.env = results.Env{Tool: "cnibench", RunID: "r1"} // as writeEnv left it at the first cluster
	r.prior = 90 * time.Second
	if err := r.writeStops(); err != nil {
		t.Fatal(err)
	}
	run, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Env.MachineS; got < 90 || got > 120 {
		t.Errorf("env.json machine_s = %g, want the 90 s of the interrupted run and this one's moment", got)
	}
}
