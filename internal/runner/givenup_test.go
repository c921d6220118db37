package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A baseline given up (at its third trial here) runs no more rounds. In
// a fixed design the cells compared with it run their count without it:
// before, every round listed it again and the runner made every attempt
// at it again (rps-rfs --set trials=5 with a broken baseline: 15 failed
// attempts, not 3), and a trial that then passed would have counted for
// a cell stops.json calls failed. In an adaptive one they stop with it.
// Either way their stops name the baseline given up (versus_failed) and
// estimate no trials to decide them: a rerun would pair them with the
// baseline that broke.
func TestGivenUpBaselineRunsNoMore(t *testing.T) {
	for _, tc := range []struct {
		set, status string
		n           int // trials of each cell compared with the baseline
	}{
		{"trials=5", "max", 5},
		{"trials.min=3", "failed", 3},
	} {
		s := roundsStudy(t, tc.set)
		r := newRoundsRun(t, s, t.TempDir(), &bytes.Buffer{})
		r.design.budget = 0
		base := s.Spec.Baseline
		f := &fakeTrials{r: r}
		run := func(u unit, round int) (time.Duration, error) {
			f.broken = map[string]bool{base: round >= 3}
			return f.trial(u, round)
		}
		if err := r.block(blockUnits(s, s.Spec.Replicas[0]), run); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, k := range f.ran {
			n[k.cell.Tuning]++
		}
		for _, tn := range s.Spec.Tunings {
			want := tc.n
			if tn.Name == base {
				want = 3
			}
			if n[tn.Name] != want {
				t.Errorf("%s: %s ran %d trials, want %d (all: %v)", tc.set, tn.Name, n[tn.Name], want, n)
			}
		}
		for _, st := range r.stops {
			switch {
			case st.Cell.Tuning == base:
				if st.Status != "failed" || st.Failed == "" || st.N != 3 {
					t.Errorf("%s: given-up baseline's stop: %+v", tc.set, st)
				}
			case st.N != tc.n || st.Status != tc.status || st.Failed != "" || st.ToDecide != 0 ||
				!strings.Contains(st.VersusFailed, "/baseline/r1 was given up (trial failed every attempt)") ||
				!strings.Contains(st.Reason, "was given up"):
				t.Errorf("%s: stop of a cell compared with the given-up baseline: %+v", tc.set, st)
			}
		}
		if len(r.stops) != len(s.Spec.Tunings) {
			t.Errorf("%s: %d stops, want %d", tc.set, len(r.stops), len(s.Spec.Tunings))
		}
	}
}
