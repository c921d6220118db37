package runner

import (
	"bytes"
	"context"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A budget too small for every cell's minimum is said once: at the start
// when even the configured trial time cannot fit it, else after the first
// round when what that round cost shows it cannot; a budget that fits
// says nothing. rps-rfs --quick has 10 cells of at least 3 trials (on
// one steering CPU, none held: unheldRun); the fake trials cost
// 4.55-5.05 s (4.25 s configured).
func TestBudgetTooSmallForMinimum(t *testing.T) {
	const warning = "is too small for the study's minimum of 3 trials in each of its 10 cells"
	for _, tc := range []struct {
		budget      time.Duration
		start, late bool
	}{
		{100 * time.Second, true, false}, // 30 x 4.25 s > 100 s
		{135 * time.Second, false, true}, // 127.5 s fits, ~141 s measured does not
		{150 * time.Second, false, false},
		{0, false, false},
	} {
		s := roundsStudy(t)
		s.Spec.Budget.Duration = tc.budget
		var log bytes.Buffer
		r := unheldRun(t, s, &log)
		r.design = newDesign(s)
		r.checkBudgetAtStart()
		atStart := strings.Contains(log.String(), warning)
		if err := runBlocks(r, &fakeTrials{r: r}); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(log.String(), warning)
		if atStart != tc.start || n != btoi(tc.start || tc.late) {
			t.Errorf("budget %s: warned at start %v, %d times in all; want %v and %v:\n%s",
				tc.budget, atStart, n, tc.start, tc.late, log.String())
		}
		if tc.late && !strings.Contains(r.env.Notes[0], "they need 2m21s in all (about 4.7s a trial, as in the first round)") {
			t.Errorf("budget %s: the warning in env.json's notes does not give the measured trial time: %q", tc.budget, r.env.Notes)
		}
		if tc.start && !strings.Contains(r.notes[0], "they need 2m8s in all (at least 4.3s a trial: its duration and pause)") {
			t.Errorf("budget %s: the start's warning %q", tc.budget, r.notes)
		}
	}
}

// The advice to raise the budget names the --budget the user gave: its
// own, or the whole of one that several runs share (advise --prove).
func TestBudgetAdviceNamesTheWhole(t *testing.T) {
	for shares, want := range map[int]string{0: "(raise --budget to 3m or more, or lower trials.min)",
		2: "(raise --budget, which 2 runs share, to 6m or more, or lower trials.min)"} {
		s := roundsStudy(t)
		s.Spec.Budget.Duration = 100 * time.Second
		var log bytes.Buffer
		r := unheldRun(t, s, &log)
		r.design, r.opt.BudgetShares = newDesign(s), shares
		r.checkBudgetAtStart()
		if !strings.Contains(log.String(), want) {
			t.Errorf("%d shares: %q lacks %q", shares, log.String(), want)
		}
	}
}

// A resumed run's check counts the interrupted run's machine time (it
// ran before replay, and counted none: a budget two thirds spent was
// said to fit), and its advice is a new run's: --resume refuses
// --budget, which it advised to raise.
func TestBudgetAtStartOfResume(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 150 * time.Second // 30 x 4.25 s = 127.5 s fits a new run
	c := s.Cells()[0]
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var old results.Run
	for trial := 1; trial <= 2; trial++ {
		start := t0.Add(time.Duration(trial) * time.Minute)
		old.Samples = append(old.Samples, results.Sample{Cell: c, Trial: trial, Attempt: 1, Start: start, End: start.Add(50 * time.Second),
			Metrics: map[string]float64{results.MetricBitrate: 1e9}})
	}
	var log bytes.Buffer
	r := unheldRun(t, s, &log)
	r.opt.Resume = true
	r.restore(&old)
	r.checkBudgetAtStart()
	want := "they need 3m40s in all (at least 4.3s a trial: its duration and pause); cells may stop before their first look " +
		"(--resume keeps the recorded budget: for the minimum, run the study again in a new directory with --budget 3m or more, or with a lower trials.min)"
	if !strings.Contains(log.String(), want) {
		t.Errorf("resumed with 100 s spent: %q\nwant %q", log.String(), want)
	}
}

// unheldRun is newRoundsRun on one steering CPU: no cell of rps-rfs is
// held (its RPS masks name one CPU), so each cell's minimum is
// trials.min.
func unheldRun(t *testing.T, s *study.Study, log *bytes.Buffer) *run {
	t.Helper()
	r := newRoundsRun(t, s, t.TempDir(), log)
	r.plan.machine = cpuset.Range(1)
	return r
}

// A held cell's minimum is its hold's, and its baseline's, which runs in
// every round it runs: rps-rfs --quick on 4 CPUs holds rps and rps+ at
// both replica counts to 8 trials, so its minimum is 2 x (3 x 8 + 2 x 3)
// = 60 trials, 255 s at 4.25 s, which a budget of 150 s (enough for 3
// trials in each cell) cannot pay: they stop before their first look,
// and the check says so. (It said 50 trials, 212.5 s, the baselines
// counted to trials.min.)
func TestBudgetCheckCountsHolds(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 150 * time.Second
	var log bytes.Buffer
	r := newRoundsRun(t, s, t.TempDir(), &log)
	r.checkBudgetAtStart()
	want := "the budget of 2m30s is too small for the study's minimum of 3 trials in each of its 10 cells " +
		"(8 in 4 cells held before a decision, as their trials may take a few distinct values, and in their 2 baselines, which run beside them): " +
		"they need 4m15s in all"
	if !strings.Contains(log.String(), want) {
		t.Errorf("%q\nwant %q", log.String(), want)
	}
}

// A resumed run's check counts only the cells it may still run: before,
// every cell the interrupted run stopped short of trials.min (here the
// budget stopped them all at 2 trials or before any) was counted again,
// and a resume with nothing to run warned that the budget was too small
// and put that in env.json's notes.
func TestBudgetCheckOfResumeCountsCellsLeft(t *testing.T) {
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 100 * time.Second
	cut := unheldRun(t, s, &bytes.Buffer{})
	if err := runBlocks(cut, &fakeTrials{r: cut}); err != nil {
		t.Fatal(err)
	}
	for _, st := range cut.stops {
		if st.N >= s.Spec.Trials.Min || st.Status != "budget" {
			t.Fatalf("%+v: want every cell stopped by the budget before trials.min (the test's point)", st)
		}
	}
	cut.out.Close()
	old, err := results.Load(cut.out.Dir())
	if err != nil {
		t.Fatal(err)
	}
	// Two cells whose stops were lost run again: 93.8 s spent and their
	// third trials at 4.25 s each do not fit in 100 s.
	for _, tc := range []struct {
		stops []results.Stop
		want  string
	}{
		{old.Stops, ""},
		{slices.Delete(slices.Clone(old.Stops), 1, 3), "is too small for the study's minimum of 3 trials in each of its 2 cells left to run: " +
			"they need 1m42s in all"},
	} {
		o := *old
		o.Stops = tc.stops
		var log bytes.Buffer
		r := unheldRun(t, s, &log)
		r.opt.Resume = true
		r.restore(&o)
		r.checkBudgetAtStart()
		if tc.want == "" && (log.Len() > 0 || len(r.notes) > 0) || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%d stops: %q; want %q", len(tc.stops), log.String(), tc.want)
		}
	}
}

// The check after the first round counts none of the cells this run has
// given up (at their set-up here, or a trial that failed every attempt)
// or stopped (a block the budget did not reach): they run nothing more.
// Before, only the interrupted run's were left out: a given-up cell
// still needed trials.min less its one given-up trial, a stopped one
// trials.min, and the warning that the budget was too small went to the
// log and env.json's notes for trials no cell would run. rps-rfs --quick
// has 5 cells at each replica count: those at 4 are dropped, and the 15
// trials of the others fit in 100 s at 4.25 s each, not in 60 s.
func TestBudgetCheckLeavesOutCellsDropped(t *testing.T) {
	s := roundsStudy(t)
	for _, tc := range []struct {
		name string
		drop func(r *run, units []unit) error
	}{
		{"given up at set-up", func(r *run, units []unit) error {
			for _, u := range units {
				if err := r.giveUpAtSetUp(u.cell, 1, setUpLost{attempts: 2, last: "scale to 4 pod pairs: ENOMEM"}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"trial given up", func(r *run, units []unit) error {
			for _, u := range units {
				l := r.cellLog(u.cell)
				l.failed = "trial 2: failed 3 attempts; last: iperf3 died"
				l.record(1, 100, 0)
				l.record(2, math.NaN(), 0)
			}
			return nil
		}},
		{"stopped", func(r *run, units []unit) error { return r.budgetSpent(units, r.groupsOf(units)) }},
	} {
		for budget, want := range map[time.Duration]string{100 * time.Second: "",
			60 * time.Second: "is too small for the study's minimum of 3 trials in each of its 5 cells left to run: they need 1m4s in all"} {
			s.Spec.Budget.Duration = budget
			r := unheldRun(t, s, &bytes.Buffer{})
			r.design = newDesign(s)
			if err := tc.drop(r, r.cellsOf(s.Spec.Datapaths[0].Name, 4)); err != nil {
				t.Fatal(err)
			}
			got := r.minimumShort(4250*time.Millisecond, "about %s a trial, as in the first round")
			if want == "" && got != "" || !strings.Contains(got, want) {
				t.Errorf("%s, budget %s: %q; want %q", tc.name, budget, got, want)
			}
		}
	}
}

// A dry run (Check) says what a run would at its start, held cells
// counted on the CPUs its preflight found: it had no plan to find them
// on.
func TestDryRunSaysBudgetShort(t *testing.T) {
	saved := engines
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"stub", func(Options) engine.Engine { return stubEngine{remote: true, machine: cpuset.Range(4)} }})
	t.Cleanup(func() { engines = saved })
	s := roundsStudy(t)
	s.Spec.Budget.Duration = 150 * time.Second
	d, err := Check(context.Background(), Options{Study: s, Engine: "stub", Progress: progress.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	want := "is too small for the study's minimum of 3 trials in each of its 10 cells (8 in 4 cells held"
	if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("dry run's warnings %q; want one saying %q", d.Warnings, want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
