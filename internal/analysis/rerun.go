package analysis

import (
	"slices"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// Rerun estimates what deciding a run's undecided cells would take: runs
// of the same study with a larger trial maximum. In an adaptive run with
// maximum Max, an undecided cell whose TrialsToDecide estimate is at most
// Max runs to its estimate, the other undecided cells to Max (futility
// may stop them sooner), its baseline (or first datapath) as long as the
// longest cell compared with it (trials are paired by round), and every
// decided cell as many trials as this time; a fixed design runs every
// cell Max trials. Machine time is at each cell's own mean trial time in
// this run. The estimates assume each cell's difference and spread hold
// (docs/statistics.md, "Futility"), so these are typical costs, not
// promises. An adaptive rerun that runs a held cell (results.Stop.Held)
// has a maximum of at least adaptive.FewValuedTrials: a smaller one
// would hold it only to that maximum.
type Rerun struct {
	// Undecided counts the undecided cells; Estimated those with an
	// estimate; NoLook those the budget stopped before any look
	// (NoLook: a larger budget, not a larger maximum, gives them one);
	// the others need more than a thousand trials, or had no interval
	// to project.
	Undecided, Estimated, NoLook int
	// Options are up to maxRerunOptions maxima, the cheapest first; the
	// last decides every estimated cell.
	Options []RerunOption
	// ThisRun is this run's machine time in trials, at the same trial
	// times.
	ThisRun time.Duration
}

// RerunOption is one trial maximum to rerun with: the undecided cells
// whose estimate it reaches, and the rerun's machine time in trials.
type RerunOption struct {
	Max, Cells int
	Time       time.Duration
}

// maxRerunOptions bounds the maxima offered: a choice, not a table.
const maxRerunOptions = 3

// TrialsKey is the --set key a rerun gives its maximum with: trials for
// a fixed design (every cell runs it), trials.max for an adaptive one.
func TrialsKey(fixed bool) string {
	if fixed {
		return "trials"
	}
	return "trials.max"
}

// Suggested is the option a rerun command spells out: the one deciding
// the most cells among those whose machine time is at most
// suggestFactor times this run's, or suggestFloor, whichever is longer;
// the cheapest option when none is. A command is copied more than it is
// read: after a quick fixed design, the maximum deciding every cell can
// run every cell of the study hundreds of trials (nic-modes --quick:
// 177 trials, about 7 hours, against 17 minutes for 6 of its 13
// undecided cells), and the line above the command lists the dearer
// maxima for a user who wants them.
func (r Rerun) Suggested() RerunOption {
	limit := max(suggestFactor*r.ThisRun, suggestFloor)
	pick := r.Options[0]
	for _, o := range r.Options[1:] {
		if o.Time <= limit {
			pick = o
		}
	}
	return pick
}

const (
	suggestFactor = 4
	suggestFloor  = time.Hour
)

// RerunBudget is the --budget a rerun whose trials take the given
// machine time needs: the trials, a fifth more for their spread and a
// minute for the set-up (nodes and pods per replica count), rounded up
// to whole minutes.
func RerunBudget(trials time.Duration) time.Duration {
	return (trials + trials/5 + 2*time.Minute - 1).Truncate(time.Minute)
}

// RerunToDecide is Rerun for a run's stops, of a fixed design or an
// adaptive one, costing a rerun of the cells keep holds (nil: every
// cell; Scope.Has: the undecided cells' scope); false when no undecided
// cell has an estimate or a cell's trial time is unknown (runs before
// results.Stop.TrialSeconds was recorded).
func RerunToDecide(stops []results.Stop, fixed bool, keep func(results.Cell) bool) (Rerun, bool) {
	var r Rerun
	var estimates []int
	for _, s := range stops {
		if s.TrialSeconds <= 0 && s.N > 0 {
			return Rerun{}, false
		}
		r.ThisRun += time.Duration(s.N) * trialTime(s)
		if undecided(s) {
			r.Undecided++
			switch {
			case s.ToDecide > 0:
				r.Estimated++
				estimates = append(estimates, s.ToDecide)
			case NoLook(s, fixed):
				r.NoLook++
			}
		}
	}
	if r.Estimated == 0 {
		return Rerun{}, false
	}
	if keep != nil {
		stops = slices.DeleteFunc(slices.Clone(stops), func(s results.Stop) bool { return !keep(s.Cell) })
	}
	slices.Sort(estimates)
	estimates = slices.Compact(estimates)
	k := len(estimates)
	picks := estimates
	if k > maxRerunOptions {
		picks = []int{estimates[(k+2)/3-1], estimates[(2*k+2)/3-1], estimates[k-1]}
	}
	// A held cell the rerun runs keeps its whole hold: a maximum below
	// it would hold the cell only to the maximum (a run with trials.max
	// of 5 judged its held cells at 5, and an unheld cell's estimate of
	// 6 would do so again).
	if !fixed && slices.ContainsFunc(stops, func(s results.Stop) bool { return s.Held > 0 }) {
		picks = slices.Clone(picks)
		for i := range picks {
			picks[i] = max(picks[i], adaptive.FewValuedTrials)
		}
		picks = slices.Compact(picks)
	}
	for _, m := range picks {
		o := rerunAt(stops, m, fixed)
		// A maximum that costs at most 5% less than the next one, which
		// decides more, is no real choice ("22 for 2 of them (about 12
		// min), 24 for 4 of them (about 12 min)"): offer the next alone.
		if n := len(r.Options); n > 0 && o.Time <= r.Options[n-1].Time*21/20 {
			r.Options = r.Options[:n-1]
		}
		r.Options = append(r.Options, o)
	}
	return r, true
}

// rerunAt is the option of maximum m.
func rerunAt(stops []results.Stop, m int, fixed bool) RerunOption {
	o := RerunOption{Max: m}
	need := map[results.Cell]int{}
	for _, s := range stops {
		need[s.Cell] = max(need[s.Cell], s.N)
		if fixed {
			need[s.Cell] = m
		}
		if !undecided(s) {
			continue
		}
		n := m
		if s.ToDecide > 0 && s.ToDecide <= m {
			n = s.ToDecide
			o.Cells++
		}
		need[s.Cell] = max(need[s.Cell], n)
		if b, ok := versusCell(stops, s); ok {
			need[b] = max(need[b], n)
		}
	}
	for _, s := range stops {
		o.Time += time.Duration(need[s.Cell]) * trialTime(s)
	}
	return o
}

// NoLook reports whether an undecided cell of an adaptive run (not
// fixed) had no look: the budget stopped it before its first, at
// trials.min or the count it was held to (results.Stop.Held), so it has
// no estimate, and a larger budget, not a larger maximum, gives it a
// look. (A fixed design's cell the budget cut short has BudgetLine's
// word in the report.)
func NoLook(s results.Stop, fixed bool) bool {
	return !fixed && undecided(s) && s.Status == string(adaptive.Budget) && s.Look == 0 && s.ToDecide == 0
}

// Minimums is the count of trials each cell of a run's stops needs
// before it stops on anything of its own: least (trials.min, a fixed
// design's count), or the count a held cell was held to
// (results.Stop.Held); a cell compared with held cells as long as the
// largest of theirs, as its trials pair with theirs by round.
func Minimums(stops []results.Stop, least int) map[results.Cell]int {
	need := map[results.Cell]int{}
	for _, s := range stops {
		need[s.Cell] = max(need[s.Cell], least, s.Held)
		if b, ok := versusCell(stops, s); ok && s.Held > 0 {
			need[b] = max(need[b], least, s.Held)
		}
	}
	return need
}

// undecided: the cell's decision is undecided and more trials could
// decide it. Not a given-up cell, nor one whose baseline was given up:
// its trials pair with nothing until what broke is fixed.
func undecided(s results.Stop) bool {
	return s.Decision == string(stats.Undecided) && s.Failed == "" && s.VersusFailed == ""
}

func trialTime(s results.Stop) time.Duration {
	return time.Duration(s.TrialSeconds * float64(time.Second))
}

// versusCell is the cell a stop was compared with: the baseline tuning's
// cell of its datapath, or in a study of datapaths the first datapath's
// cell of its tuning.
func versusCell(stops []results.Stop, s results.Stop) (results.Cell, bool) {
	byTuning, byDatapath := s.Cell, s.Cell
	byTuning.Tuning, byDatapath.Datapath = s.Versus, s.Versus
	for _, o := range stops {
		if o.Cell == byTuning || o.Cell == byDatapath {
			return o.Cell, true
		}
	}
	return results.Cell{}, false
}
