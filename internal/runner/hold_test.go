package runner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/results"
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
// baseline in every trial (trials of about 4.5 s, as fakeTrials times
// them). At 1 pair alone, with the whole 4-minute budget: rfs and rfs+
// are decided worse at the first look (3 trials), rps and rps+ only at
// 8, and their stops say why. With the profile's two replica counts
// each block has half the budget, which stops rps and rps+ at 5 or 6
// trials, undecided, saying they were held and that the budget ran out
// (docs/rps-rfs.md: --set budget=6m reaches 8 here).
func TestHeldCellsInQuickRun(t *testing.T) {
	for _, set := range [][]string{{"replicas=[1]"}, nil} {
		s := roundsStudy(t, set...)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		f := &fakeTrials{r: r, value: func(c results.Cell, round int) float64 {
			v := 100 * (1 + 0.01*float64(round%3-1))
			if c.Tuning != s.Spec.Baseline {
				v *= 0.8
			}
			return v
		}}
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
