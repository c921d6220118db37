package report

// What to run next after a run: the rerun that would decide its
// undecided cells, the budget its minimum needs when the budget ran out
// first, and the way from a one-trial tour to decisions.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// RerunLine says what deciding a run's undecided cells would take
// (analysis.RerunToDecide): the trial maxima to rerun the study s with, as
// the --set that gives them (trials.max for an adaptive study, trials for
// a fixed one), after the --set that narrows the study to what the
// undecided cells need (analysis.RerunScope), with the cells each would
// decide and its machine time, and that a budget caps the rerun too; ""
// when no undecided cell has an estimate. Undecided cells the budget
// stopped before any look (a held cell before its hold) are named
// apart, as needing a larger budget, not a larger maximum (BudgetLine
// says so alone when no cell has an estimate). Where undecided cells counted
// disturbed trials (d), it says their spread, and so the estimates, may be
// the machine's disturbance.
func RerunLine(stops []results.Stop, s *study.Study, d Disturbed) string {
	fixed := !s.Spec.Trials.Adaptive()
	sc := analysis.RerunScope(stops, s)
	r, ok := analysis.RerunToDecide(stops, fixed, sc.Has)
	if !ok {
		return ""
	}
	flag := "--set " + analysis.TrialsKey(fixed)
	if len(sc.Sets) > 0 {
		// Only what the undecided cells need, not every cell again.
		var words []string
		for _, kv := range sc.Sets {
			words = append(words, "--set", kv[0]+"="+kv[1])
		}
		flag = cmdline.Quote(words) + " " + flag
	}
	var l string
	switch o := r.Options[0]; {
	case r.Undecided == 1:
		l = fmt.Sprintf("to decide the undecided cell, rerun with %s=%d (about %s of trials)", flag, o.Max, DurationText(o.Time))
	case len(r.Options) == 1 && o.Cells == r.Undecided:
		// One maximum decides them all: no choice to offer.
		l = fmt.Sprintf("to decide the %d undecided cells, rerun with %s=%d (about %s of trials)", r.Undecided, flag, o.Max, DurationText(o.Time))
	default:
		var opts []string
		for i, o := range r.Options {
			cells, cost := fmt.Sprintf("%d of them", o.Cells), "about "+DurationText(o.Time)
			if i == 0 {
				cost += " of trials"
			}
			switch {
			case o.Cells == r.Undecided && o.Cells == 2:
				cells = "both"
			case o.Cells == r.Undecided:
				cells = fmt.Sprintf("all %d", o.Cells)
			case o.Cells == r.Estimated:
				cells = fmt.Sprintf("the %d with an estimate", o.Cells)
				if n := r.Undecided - r.Estimated - r.NoLook; n > 0 {
					cost += fmt.Sprintf("; %d without one up to 1000 trials", n)
				}
				if r.NoLook > 0 {
					cost += "; " + noLookText(stops, s, fixed)
				}
			}
			opts = append(opts, fmt.Sprintf("%d for %s (%s)", o.Max, cells, cost))
		}
		l = fmt.Sprintf("to decide the %d undecided cells, rerun with %s=N: %s", r.Undecided, flag, strings.Join(opts, ", "))
	}
	l += fmt.Sprintf("; this run's trials took %s", DurationText(r.ThisRun))
	if b := s.Spec.Budget.Duration; b > 0 {
		l += fmt.Sprintf(", within a budget of %s that caps the rerun too (--budget, set-up included)", DurationText(b))
	}
	l += ". Estimates from each cell's own difference and spread, which in simulation decide " + adaptive.ToDecideCalibration +
		" of such cells (docs/statistics.md)"
	const why = " includes trials counted though disturbed (the noise guard's repeats used up): on a quiet machine fewer may do"
	switch n := d.undecidedDisturbed(stops); {
	case n == 0:
	case n == 1 && r.Undecided == 1:
		l += "; the cell's spread" + why
	case n == 2 && r.Undecided == 2:
		l += "; the spread of both undecided cells" + why
	case n == r.Undecided:
		l += fmt.Sprintf("; the spread of all %d undecided cells%s", n, why)
	default:
		l += fmt.Sprintf("; the spread of %d of the %d undecided cells%s", n, r.Undecided, why)
	}
	return l
}

// noLookText names the undecided cells the budget stopped before any
// look (analysis.NoLook), which no larger maximum gives one: "2 held to
// 8 trials, stopped by the budget at 6 before any look: they need a
// larger --budget, not a larger maximum".
func noLookText(stops []results.Stop, s *study.Study, fixed bool) string {
	var ns, looks []int
	held := 0
	for _, st := range stops {
		if !analysis.NoLook(st, fixed) {
			continue
		}
		ns, looks = append(ns, st.N), append(looks, max(st.Held, s.Spec.Trials.Min))
		if st.Held > 0 {
			held++
		}
	}
	need := "they need"
	if len(ns) == 1 {
		need = "it needs"
	}
	need += " a larger --budget, not a larger maximum"
	if held == len(ns) {
		return fmt.Sprintf("%d held to %s trials, stopped by the budget at %s before any look: %s", len(ns), span(looks), span(ns), need)
	}
	return fmt.Sprintf("%d stopped by the budget at %s trials before any look (the first at %s): %s", len(ns), span(ns), span(looks), need)
}

// span is the range of xs (not empty): "6", or "5-6".
func span(xs []int) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// RerunCommand is the command that reruns the run o started, narrowed to
// what its undecided cells need, with the
// trial maximum RerunLine offers that analysis.Rerun.Suggested picks (the
// one deciding the most cells at a cost near this run's), and a budget that covers it if the run had one: "cnibench run rps-rfs
// --quick --set trials.max=24 --budget 12m"; "" when RerunLine offers
// none or the run did not record its command.
func RerunCommand(stops []results.Stop, s *study.Study, o *results.Origin) string {
	fixed := !s.Spec.Trials.Adaptive()
	sc := analysis.RerunScope(stops, s)
	r, ok := analysis.RerunToDecide(stops, fixed, sc.Has)
	if !ok || o == nil || len(o.Command) == 0 {
		return ""
	}
	pick := r.Suggested()
	// A later flag or --set of the same key wins over the user's own.
	words := cmdline.Narrow(o.Command, sc.Sets)
	words = cmdline.WithSet(words, analysis.TrialsKey(fixed), strconv.Itoa(pick.Max))
	if s.Spec.Budget.Duration > 0 {
		// The budget that stopped this run would stop the rerun too.
		words = append(cmdline.Without(words, nil, []string{"budget"}), "--budget", study.ShortDuration(min(analysis.RerunBudget(pick.Time), study.MaxBudget)))
	}
	return cmdline.Quote(words)
}

// BudgetLine says, for a run whose budget ran out before some cells had
// their minimum of trials (the study s's: an adaptive design's first
// look, a fixed design's count; a held cell's hold, and its baseline's
// trials beside it, analysis.Minimums), that those cells are undecided
// for want of budget, not of trials, and about what every cell's
// minimum costs at this run's time a trial; "" otherwise. (The run
// warned at its start too, but the end of a run is what is read.)
func BudgetLine(stops []results.Stop, s *study.Study, spent time.Duration) string {
	short, per, need, whole := budgetShort(stops, s, spent)
	if short == 0 {
		return ""
	}
	minimum := "the minimum of " + adaptive.TrialCount(s.Spec.Trials.Min)
	if h := heldShort(stops, s); h > 0 {
		minimum = fmt.Sprintf("their minimum (%s for a cell held before a decision, as its trials may take a few distinct values, "+
			"and for the cell it is compared with; %d for the others)", adaptive.TrialCount(h), s.Spec.Trials.Min)
	}
	cells := fmt.Sprintf("%d cells", short)
	if short == 1 {
		cells = "1 cell"
	}
	rate := fmt.Sprintf("at this run's %s a trial", DurationText(per))
	if whole {
		rate = fmt.Sprintf("at this run's %s of machine time a counted trial (its cluster set-ups, pauses and repeated or failed attempts included)", DurationText(per))
	}
	return fmt.Sprintf("the budget of %s ran out before %s had %s, so more trials alone will not decide them: "+
		"the minimum of all %d cells takes about %s %s; rerun with --budget %s or more, or with fewer cells",
		study.ShortDuration(s.Spec.Budget.Duration), cells, minimum, len(stops),
		DurationText(need), rate, study.ShortDuration(minimumBudget(need)))
}

// heldShort is the largest minimum above trials.min among the cells
// the budget stopped short of theirs (a hold, or a baseline's trials
// beside its held cells); 0 when every such cell's is trials.min.
func heldShort(stops []results.Stop, s *study.Study) int {
	h, mins := 0, analysis.Minimums(stops, s.Spec.Trials.Min)
	for _, st := range stops {
		if m := mins[st.Cell]; st.Status == string(adaptive.Budget) && st.N < m && m > s.Spec.Trials.Min {
			h = max(h, m)
		}
	}
	return h
}

// BudgetCommand is the command BudgetLine gives for the run o started:
// its own with the budget that pays for the minimum; "" when BudgetLine
// says nothing or the command is not recorded.
func BudgetCommand(stops []results.Stop, s *study.Study, o *results.Origin, spent time.Duration) string {
	short, _, need, _ := budgetShort(stops, s, spent)
	if short == 0 || o == nil || len(o.Command) == 0 {
		return ""
	}
	words := cmdline.Without(o.Command, nil, []string{"budget"})
	return cmdline.Quote(append(words, "--budget", study.ShortDuration(minimumBudget(need))))
}

// budgetShort counts the cells the budget stopped short of their
// minimum (analysis.Minimums: trials.min, a held cell's hold and its
// baseline's trials beside it), with what a trial costs and what every
// cell's minimum costs at it. A
// trial's cost is the run's machine time over its counted trials (whole:
// what the budget paid for each, set-ups and repeats included; a run of
// TCG-emulated nodes paid 13 s for trials of 8 s) when the run recorded
// it (spent > 0), else the mean machine time of a trial over the cells
// that ran, which leaves set-ups out and so asks too little.
func budgetShort(stops []results.Stop, s *study.Study, spent time.Duration) (short int, per, need time.Duration, whole bool) {
	if s.Spec.Budget.Duration <= 0 {
		return 0, 0, 0, false
	}
	var sum float64
	ran, counted, least := 0, 0, 0
	mins := analysis.Minimums(stops, s.Spec.Trials.Min)
	for _, st := range stops {
		if st.Status == string(adaptive.Budget) && st.N < mins[st.Cell] {
			short++
		}
		least += mins[st.Cell]
		if st.TrialSeconds > 0 {
			sum += st.TrialSeconds
			ran++
		}
		counted += st.N
	}
	if short == 0 || ran == 0 {
		// No trial ran to say what one costs: the run's start warned
		// from the configured duration.
		return 0, 0, 0, false
	}
	per = time.Duration(sum / float64(ran) * float64(time.Second))
	if spent > 0 && counted > 0 && spent/time.Duration(counted) > per {
		per, whole = spent/time.Duration(counted), true
	}
	return short, per, time.Duration(least) * per, whole
}

// minimumBudget is a budget that pays for need, in whole minutes with
// one to spare (set-ups), as the run's start warning rounds it.
func minimumBudget(need time.Duration) time.Duration {
	return min(need.Round(time.Minute)+time.Minute, study.MaxBudget)
}

// TourLine says, for a run whose compared cells all ran a single trial (a
// one-trial tour such as cni-compare --quick), how to get decisions: a
// profile of the study s that decides, or trials of an adaptive range;
// "" otherwise. The study's profiles are o's when s was read back from a
// run directory (study.yaml keeps none).
func TourLine(stops []results.Stop, s *study.Study, o *results.Origin) string {
	if !oneTrialTour(stops, s) {
		return ""
	}
	how := "--set 'trials=" + tourTrials + "'"
	if hasProfile(s, o, decideProfile) {
		how = "--profile " + decideProfile + ", or " + how
	}
	return "one trial per cell gives no interval, so nothing was decided: for decisions, run with " + how
}

// TourCommand is the command TourLine's first way gives for the run o
// started: its profile replaced by the deciding one, or the trials range
// added; "" when TourLine says nothing or the command is not recorded.
func TourCommand(stops []results.Stop, s *study.Study, o *results.Origin) string {
	if !oneTrialTour(stops, s) || o == nil || len(o.Command) == 0 {
		return ""
	}
	if hasProfile(s, o, decideProfile) {
		return cmdline.Quote(append(cmdline.Without(o.Command, []string{"quick"}, []string{"profile"}), "--profile", decideProfile))
	}
	return cmdline.Quote(cmdline.WithSet(o.Command, "trials", tourTrials))
}

const (
	decideProfile = "decide"
	tourTrials    = "{min: 3, max: 6}"
)

func hasProfile(s *study.Study, o *results.Origin, name string) bool {
	if _, ok := s.Profiles[name]; ok {
		return true
	}
	return o != nil && slices.Contains(o.Profiles, name)
}

// oneTrialTour reports whether s plans a single trial per cell and every
// compared cell ran just that. A design of more trials whose cells ran
// one because its budget ran out is no tour: more trials per cell would
// not help there, more budget would.
func oneTrialTour(stops []results.Stop, s *study.Study) bool {
	if s.Spec.Trials.Max > 1 {
		return false
	}
	compared := 0
	for _, st := range stops {
		if lineVerdict(st) == "" || lineVerdict(st) == notMeasuredVerdict {
			continue
		}
		if st.N >= 2 || st.Low != nil {
			return false
		}
		compared++
	}
	return compared > 0
}
