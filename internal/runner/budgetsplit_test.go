package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/knob"
)

// The budget is split over the blocks still to run, and over a block's
// groups, in proportion to the trials their minimum takes, a held
// cell's hold and its baseline's trials beside it counted. rps-rfs
// --quick: on one steering CPU no cell is held, 15 trials in each block,
// even halves as before; on 2 CPUs rps and rps+ are held at 1 pair (1
// flow on 2 CPUs; 4 flows at 4 pairs are not few), 30 trials there
// against 15 at 4 pairs; on 4 CPUs at both, 30 and 30. Before, every
// block had an even share: the 1-pair block on 2 CPUs half, the budget
// of 20 of its 30 trials. The last block takes what is left.
func TestBudgetSplitByMinimum(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cpus  int
		set   []string
		share map[string]float64 // a group's share of what is left, by its variant, in the first block
	}{
		{"no holds", 1, nil, map[string]float64{"tcp": 15.0 / 30}},
		{"held at 1 pair", 2, nil, map[string]float64{"tcp": 30.0 / 45}},
		{"held at both", 4, nil, map[string]float64{"tcp": 30.0 / 60}},
		// Two variants: the one stream of "one" is held at 1 pair, the
		// four of "four" are not; neither at 4 pairs. 30 + 15 at 1 pair,
		// 15 + 15 at 4.
		{"variants", 2, []string{"workloads=[{name: one, tool: iperf3, protocol: tcp}, {name: four, tool: iperf3, protocol: tcp, parallel: 4}]"},
			map[string]float64{"one": 30.0 / 75, "four": 15.0 / 75}},
	} {
		s := roundsStudy(t, tc.set...)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		r.plan.machine = cpuset.Range(tc.cpus)
		budget := s.Spec.Budget.Duration
		near := func(got time.Duration, share float64) bool {
			want := time.Duration(share * float64(budget))
			return got <= want && got > want-time.Second // the time since the run began is spent too
		}
		dp := s.Spec.Datapaths[0].Name
		first := r.groupsOf(r.cellsOf(dp, 1))
		allow, ok := r.groupBudget(first)
		if !ok || len(first) != len(tc.share) {
			t.Fatalf("%s: ok %v, %d groups", tc.name, ok, len(first))
		}
		for _, g := range first {
			w := g.units[0].work.Name
			if got := allow(g); !near(got, tc.share[w]) {
				t.Errorf("%s, %s at 1 pair: %s of %s, want %.3g of it", tc.name, w, got, budget, tc.share[w])
			}
		}
		r.blocksDone = 1
		last := r.groupsOf(r.cellsOf(dp, 4))
		allow, _ = r.groupBudget(last)
		var sum time.Duration
		for _, g := range last {
			sum += allow(g)
		}
		if !near(sum, 1) {
			t.Errorf("%s, at 4 pairs: %s of %s, want all of it", tc.name, sum, budget)
		}
	}
}

// rps-rfs --quick on a 2-CPU server (held at 1 pair only), every tuning
// 20% below the baseline: with the block's share in proportion to its
// minimum (two thirds), rps and rps+ at 1 pair reach their hold and are
// decided at their first look, 8 trials, and every cell at 4 pairs at 3.
// With an even share (half the budget, 2m15s: the 1-pair block's 30
// trials of the minimum cost 2m22s at these trials' 4.55-5.05 s) they
// stopped at 7 trials, undecided, while the 4-pair block (1m10s of
// minimum) had more than it needed.
func TestHeldBlockGetsItsMinimum(t *testing.T) {
	s := roundsStudy(t)
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	r.plan.machine = cpuset.Range(2)
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
	if len(r.stops) != len(s.Cells()) {
		t.Fatalf("%d stops, want %d", len(r.stops), len(s.Cells()))
	}
	for _, st := range r.stops {
		held := strings.HasPrefix(st.Cell.Tuning, "rps") && st.Cell.Replicas == 1
		look := map[bool]int{true: 8, false: 3}[held]
		switch {
		case st.Cell.Tuning == s.Spec.Baseline:
		case st.Look != look || st.Decision != "worse" || held != strings.Contains(st.Reason, "held to 8 trials"):
			t.Errorf("%s at %d pairs: %s n=%d look %d %s (%s); want worse at %d", st.Cell.Tuning, st.Cell.Replicas,
				st.Status, st.N, st.Look, st.Decision, st.Reason, look)
		}
	}
	if r.spent() > s.Spec.Budget.Duration {
		t.Errorf("spent %s of a budget of %s", r.spent(), s.Spec.Budget.Duration)
	}
}

// The budget check counts a baseline beside held cells to their hold:
// the controller runs it in every round they run. rps-rfs --quick on 2
// CPUs at the 5.5 s a trial it costs there: 3 x 8 + 2 x 3 trials at 1
// pair and 5 x 3 at 4, 45 trials, 4m8s; counted to trials.min the
// 1-pair baseline made it 40, 3m40s, and a budget of 4m was said to fit.
// The quick profile's own budget pays for it. After the first round
// (each 1-pair cell has one trial) the baseline needs 7 more, one in
// each round its held cells still run, not 2: 40 trials, 3m40s.
func TestBudgetCheckCountsBaselineBesideHolds(t *testing.T) {
	for _, tc := range []struct {
		budget time.Duration
		first  bool // after the first round
		want   string
	}{
		{4 * time.Minute, false, "the budget of 4m is too small for the study's minimum of 3 trials in each of its 10 cells " +
			"(8 in 2 cells held before a decision, as their trials may take a few distinct values, and in their baseline, which runs beside them): " +
			"they need 4m8s in all (about 5.5s a trial, as in the first round); cells may stop before their first look (raise --budget to 5m or more"},
		{0, false, ""}, // the profile's
		{210 * time.Second, true, "they need 3m40s in all"},
	} {
		s := roundsStudy(t)
		if tc.budget > 0 {
			s.Spec.Budget.Duration = tc.budget
		}
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		r.plan.machine = cpuset.Range(2)
		if tc.first {
			for _, u := range r.cellsOf(s.Spec.Datapaths[0].Name, 1) {
				r.cellLog(u.cell).record(1, 100, 0)
			}
		}
		got := r.minimumShort(5500*time.Millisecond, "about %s a trial, as in the first round")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("budget %s: %q\nwant %q", s.Spec.Budget.Duration, got, tc.want)
		}
	}
}

// A resumed run's advice is a new run's budget for the whole minimum,
// the baselines beside held cells counted to the hold: on 4 CPUs 60
// trials, 6 min at 6 s (before, 50 trials: 5 min, and --budget 6m).
func TestBudgetAdviceOfResumeCountsBaselineBesideHolds(t *testing.T) {
	s := roundsStudy(t)
	r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
	r.opt.Resume = true
	got := r.minimumShort(6*time.Second, "about %s a trial")
	if want := "run the study again in a new directory with --budget 7m or more"; !strings.Contains(got, want) {
		t.Errorf("%q\nwant %q", got, want)
	}
}

// A baseline ahead of its cells needs a trial in each round they still
// run that it has none in. rps-rfs --quick on 4 CPUs (rps and rps+ held
// to 8), the 1-pair baseline counted in rounds 1 and 2, its cells in
// none: resumed, its cells run rounds 1 to 8, the interrupted run's cut
// ones again, where its two are replayed, so it needs 6 more; in a run
// going on they run rounds 3 to 10 (deferred before), and it needs 8.
// The 4-pair baseline needs its cells' 8 either way.
func TestMinimumLeftOfBaselineAhead(t *testing.T) {
	for resume, want := range map[bool]int{true: 6, false: 8} {
		s := roundsStudy(t)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		r.opt.Resume = resume
		dp := s.Spec.Datapaths[0].Name
		for _, u := range r.cellsOf(dp, 1) {
			if u.cell.Tuning == s.Spec.Baseline {
				r.cellLog(u.cell).record(1, 100, 0)
				r.cellLog(u.cell).record(2, 100, 0)
			}
		}
		units := r.toRun()
		need, beside := r.minimumLeft(units, true)
		for i, u := range units {
			if u.cell.Tuning != s.Spec.Baseline {
				continue
			}
			if w := map[int]int{1: want, 4: 8}[u.cell.Replicas]; need[i] != w {
				t.Errorf("resumed %v: the baseline at %d pairs needs %d, want %d", resume, u.cell.Replicas, need[i], w)
			}
		}
		if beside != 2 {
			t.Errorf("resumed %v: %d baselines raised, want 2", resume, beside)
		}
	}
}
