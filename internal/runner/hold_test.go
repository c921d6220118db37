package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/version"
)

// The rule: a cell is held when a knob spreads its flows by hash over
// at least two CPUs and it has fewer than two flows per CPU.
func TestFewValued(t *testing.T) {
	for _, tc := range []struct {
		flows, cpus int
		why         string // "" when not held
	}{
		{1, 4, "its steering places 1 flow on 4 CPUs per trial by hash, so its trials may take a few distinct values"},
		{7, 4, "its steering places 7 flows on 4 CPUs per trial"},
		{1, 2, "1 flow on 2 CPUs"},
		{8, 4, ""},  // two flows per CPU
		{16, 4, ""}, // more
		{1, 1, ""},  // one CPU takes every flow, every trial
		{1, 0, ""},  // no knob places flows by hash
	} {
		h := fewValued(tc.flows, tc.cpus)
		if tc.why == "" && h != (adaptive.Hold{}) ||
			tc.why != "" && (h.Trials != adaptive.FewValuedTrials || !strings.Contains(h.Why, tc.why)) {
			t.Errorf("%d flows on %d CPUs: %+v, want %q", tc.flows, tc.cpus, h, tc.why)
		}
	}
}

// The cells of rps-rfs --quick on a 4-CPU server, as cellsAt lists them:
// rps and rps+ (RPS alone over 4 CPUs) are held at 1 pair and at 4
// (4 flows), not at 8 pairs, nor at 2 pairs of 4 streams each; rfs,
// rfs+ (RFS follows the reader) and the baseline never. The held cells'
// plans say why.
func TestHoldOfCells(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		reps int
		held bool
	}{
		{nil, 1, true},
		{nil, 4, true},
		{[]string{"replicas=[8]"}, 8, false},
		{[]string{"replicas=[2]", "workloads.tcp.parallel=4"}, 2, false},
		{[]string{"replicas=[2]", "workloads.tcp.parallel=3"}, 2, true},
	} {
		s := roundsStudy(t, tc.set...)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		r.plan.machine = cpuset.Range(4)
		tgt := &knob.Target{Study: s, Datapath: s.Spec.Datapaths[0], Servers: pods("srv", 16), Clients: pods("cli", 16)}
		units, err := r.cellsAt(tc.reps, tgt)
		if err != nil {
			t.Fatal(err)
		}
		g := &group{metric: r.metricOf(units[0].work), units: units}
		p, err := r.planRound(g, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range units {
			want := tc.held && strings.HasPrefix(u.cell.Tuning, "rps")
			got := u.hold != (adaptive.Hold{})
			held := strings.Contains(p.Cells[i].Reason, "held to 8 trials before a decision: its steering places")
			if got != want || held != want {
				t.Errorf("%v at %d pairs, %s: hold %+v, plan %q; want held %v", tc.set, tc.reps, u.cell.Tuning, u.hold, p.Cells[i].Reason, want)
			}
		}
	}
}

// rps-rfs --quick on a 4-CPU server, every tuning 20% below the
// baseline in every trial (trials of about 4.7 s, as fakeTrials times
// them). At 1 pair alone, with the whole budget of 4m30s: rfs and rfs+
// are decided worse at the first look (3 trials), rps and rps+ only at
// 8, and their stops say why. With the profile's two replica counts,
// held alike, and a budget of 4m (the profile's before it paid for the
// held cells on 2 CPUs; the 60 trials of the minimum on 4 cost about
// 4m43s here) each block has half the budget, which stops rps and rps+
// at 6 or 7 trials, undecided, saying they were held and that the
// budget ran out (docs/rps-rfs.md: --set budget=6m reaches 8 here).
// With the profile's 4m30s the 1-pair block stops them at 7 and leaves
// the 4-pair block a few seconds more than its half, about enough for
// their eighth trial: too close to a budget's edge to test.
func TestHeldCellsInQuickRun(t *testing.T) {
	for _, set := range [][]string{{"replicas=[1]"}, nil} {
		s := roundsStudy(t, set...)
		if set == nil {
			s.Spec.Budget.Duration = 4 * time.Minute
		}
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		f := &fakeTrials{r: r, value: heldValue(s)}
		for _, reps := range s.Spec.Replicas {
			tgt := &knob.Target{Study: s, Datapath: s.Spec.Datapaths[0], Servers: pods("srv", 4), Clients: pods("cli", 4)}
			units, err := r.cellsAt(reps, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.block(units, f.trial); err != nil {
				t.Fatal(err)
			}
		}
		room := set != nil
		for _, st := range r.stops {
			held := strings.HasPrefix(st.Cell.Tuning, "rps")
			why := fmt.Sprintf("held to 8 trials before a decision: its steering places %d flow", st.Cell.Replicas)
			heldTo(t, st, held)
			switch {
			case st.Cell.Tuning == s.Spec.Baseline:
			case held && room && (st.Look != 8 || st.Decision != "worse" || !strings.Contains(st.Reason, why)):
				t.Errorf("%v, %s: %s n=%d look %d %s (%s)", set, st.Cell.Tuning, st.Status, st.N, st.Look, st.Decision, st.Reason)
			case held && !room && (st.Status != "budget" || st.N >= 8 || st.Decision != "undecided" ||
				!strings.Contains(st.Reason, why) || !strings.Contains(st.DecisionReason, why)):
				t.Errorf("%v, %s: %s n=%d %s (%s; %s)", set, st.Cell.Tuning, st.Status, st.N, st.Decision, st.Reason, st.DecisionReason)
			case !held && (st.Look != 3 || st.Decision != "worse" || strings.Contains(st.Reason, "held")):
				t.Errorf("%v, %s: %s n=%d look %d %s (%s)", set, st.Cell.Tuning, st.Status, st.N, st.Look, st.Decision, st.Reason)
			}
		}
	}
}

// heldStops checks the stops of rps-rfs --quick cells whose tunings are
// all 20% below the baseline (heldValue) with room to reach 8 trials:
// rps and rps+ are decided worse at their first look, at 8 trials, and
// say why; rfs and rfs+ at 3, not held.
func heldStops(t *testing.T, name string, s *study.Study, stops []results.Stop) {
	t.Helper()
	if len(stops) != len(s.Cells()) {
		t.Fatalf("%s: %d stops, want %d", name, len(stops), len(s.Cells()))
	}
	for _, st := range stops {
		held := strings.HasPrefix(st.Cell.Tuning, "rps")
		why := fmt.Sprintf("held to 8 trials before a decision: its steering places %d flow", st.Cell.Replicas)
		heldTo(t, st, held)
		switch {
		case st.Cell.Tuning == s.Spec.Baseline:
		case held && (st.Look != 8 || st.Decision != "worse" || !strings.Contains(st.Reason, why)):
			t.Errorf("%s, %s/%s: %s n=%d look %d %s (%s)", name, st.Cell.Datapath, st.Cell.Tuning, st.Status, st.N, st.Look, st.Decision, st.Reason)
		case !held && (st.Look != 3 || st.Decision != "worse" || strings.Contains(st.Reason, "held")):
			t.Errorf("%s, %s/%s: %s n=%d look %d %s (%s)", name, st.Cell.Datapath, st.Cell.Tuning, st.Status, st.N, st.Look, st.Decision, st.Reason)
		}
	}
}

// heldTo checks that a stop records the count its cell was held to
// (8, whatever stopped it), 0 for a cell not held: what
// scripts/bench-replay -holds reads.
func heldTo(t *testing.T, st results.Stop, held bool) {
	t.Helper()
	if want := map[bool]int{true: adaptive.FewValuedTrials}[held]; st.Held != want {
		t.Errorf("%s/%s at %d pairs: stop held %d, want %d (%s)", st.Cell.Datapath, st.Cell.Tuning, st.Cell.Replicas, st.Held, want, st.Reason)
	}
}

// heldValue is a trial of rps-rfs whose tunings are 20% below the
// baseline, with ±1% of noise.
func heldValue(s *study.Study) func(c results.Cell, round int) float64 {
	return func(c results.Cell, round int) float64 {
		v := 100 * (1 + 0.01*float64(round%3-1))
		if c.Tuning != s.Spec.Baseline {
			v *= 0.8
		}
		return v
	}
}

// A study of several datapaths plans its rounds from the blocks'
// units (sharedRounds), not from cellsAt's: its rps cells are held as a
// study of one datapath's are (TestHeldCellsInQuickRun). Its budget is
// 10 minutes: the two datapaths' 8 rounds cost more than --quick's 4.5.
func TestHeldCellsInterleaved(t *testing.T) {
	s := roundsStudy(t, "datapaths=[calico-vxlan,flannel-vxlan]", "replicas=[1]", "budget=10m")
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	f := &fakeTrials{r: r, value: heldValue(s)}
	on := func(_ context.Context, d study.Datapath, round int, plans map[int][]job) error {
		return r.runJobs(plans[1], round, f.trial)
	}
	if err := r.sharedRounds(context.Background(), on); err != nil {
		t.Fatal(err)
	}
	heldStops(t, "interleaved", s, r.stops)
}

// A resumed run replaying a datapath the interrupted run finished but
// for its stops (replayDatapath: no cluster, its cells from cellsOf)
// plans its cells again with their holds, and its stops say so. The
// interrupted run: rps-rfs at 1 pair, at most 8 trials, rfs and rfs+
// given up at their first trial, rps and rps+ 20% below the baseline
// and held to 8, so every cell counted its maximum or was given up.
func TestHeldCellsReplayed(t *testing.T) {
	s := roundsStudy(t, "replicas=[1]", "trials.max=8")
	dir := t.TempDir()
	var log bytes.Buffer
	cut := newRoundsRun(t, s, dir, &log)
	cut.env = results.Env{Tool: "cnibench", Engine: "stub", Version: version.Version, RunID: "r1"}
	if err := cut.out.WriteEnv(cut.env); err != nil {
		t.Fatal(err)
	}
	f := &fakeTrials{r: cut, value: heldValue(s), broken: map[string]bool{"rfs": true, "rfs+": true}}
	tgt := &knob.Target{Study: s, Datapath: s.Spec.Datapaths[0], Servers: pods("srv", 4), Clients: pods("cli", 4)}
	units, err := cut.cellsAt(1, tgt)
	if err != nil {
		t.Fatal(err)
	}
	if err := cut.block(units, f.trial); err != nil {
		t.Fatal(err)
	}
	heldAt8 := func(name string, stops []results.Stop) {
		t.Helper()
		if len(stops) != len(s.Cells()) {
			t.Fatalf("%s: %d stops, want %d", name, len(stops), len(s.Cells()))
		}
		for _, st := range stops {
			heldTo(t, st, strings.HasPrefix(st.Cell.Tuning, "rps"))
			if strings.HasPrefix(st.Cell.Tuning, "rps") &&
				(st.N != 8 || st.Look != 8 || st.Decision != "worse" || !strings.Contains(st.Reason, "held to 8 trials before a decision")) {
				t.Errorf("%s, %s: %s n=%d look %d %s (%s)", name, st.Cell.Tuning, st.Status, st.N, st.Look, st.Decision, st.Reason)
			}
		}
	}
	heldAt8("interrupted", cut.stops)
	cut.out.Close()
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
	ups := 0
	res := &run{study: s, design: newDesign(s), done: map[trialKey]bool{}, began: time.Now(), out: w, engine: failUp{ups: &ups},
		opt: Options{Progress: progress.New(&log), Resume: true, OutDir: dir}, plan: &plan{machine: cpuset.Range(4)}}
	if err := res.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	if err := res.execute(context.Background()); err != nil || ups != 0 {
		t.Fatalf("resume: %v, %d clusters built; want none built (the test's point: a replayed datapath)", err, ups)
	}
	got, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	heldAt8("replayed", got.Stops)
}
