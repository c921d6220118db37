package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// A budget too small for every cell's minimum is said once: at the start
// when even the configured trial time cannot fit it, else after the first
// round when what that round cost shows it cannot; a budget that fits
// says nothing. rps-rfs --quick has 10 cells of at least 3 trials; the
// fake trials cost 4.55-5.05 s (4.25 s configured).
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
		r := newRoundsRun(t, s, t.TempDir(), &log)
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
		r := newRoundsRun(t, s, t.TempDir(), &log)
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
	r := newRoundsRun(t, s, t.TempDir(), &log)
	r.opt.Resume = true
	r.restore(&old)
	r.checkBudgetAtStart()
	want := "they need 3m40s in all (at least 4.3s a trial: its duration and pause); cells may stop before their first look " +
		"(--resume keeps the recorded budget: for the minimum, run the study again in a new directory with --budget 3m or more, or with a lower trials.min)"
	if !strings.Contains(log.String(), want) {
		t.Errorf("resumed with 100 s spent: %q\nwant %q", log.String(), want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
