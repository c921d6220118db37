// Package seen reads a run directory for what `cnibench advise --run`
// sets beside its inspection: findings a rule's candidate answers (cells
// one core bound, a receive-steering tuning measured against the
// baseline, netfilter's share of the CPU cost per packet, an overlay
// against a datapath without one, round trips on CPUs slow to wake), in words with the run's own numbers.
// It computes nothing itself: the numbers are the analysis's (its
// summaries and comparisons of the run's samples) and the run's stops,
// as the run's report has them.
package seen

import (
	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// found is what a finder found in a run: its text ("" when the run
// does not show it), the cells it showed in (what advise --prove
// narrows the run's study to) and which way the run's decisions point
// for the rules that answer it (advise.Sighting.Lean).
type found struct {
	text  string
	cells []results.Cell
	lean  string
}

// finders is the one list: a finding's name (advise.Findings) and what
// finds it in a run. A new finding is a file here and a line in this
// list.
// needsStudy: the finder finds nothing without the run's study (s nil,
// a study.yaml the format no longer reads).
var finders = []struct {
	name       string
	find       func(run *results.Run, s *study.Study) found
	needsStudy bool
}{
	{advise.FindingOneCore, oneCore, false},
	{advise.FindingSteering, steering, true},
	{advise.FindingNetfilter, netfilter, false},
	{advise.FindingOverlay, overlay, true},
	{advise.FindingIdleWake, idleWake, true},
}

// NeedStudy names the findings that are not looked for in a run whose
// study could not be read, which the pages say.
func NeedStudy() []string {
	var out []string
	for _, f := range finders {
		if f.needsStudy {
			out = append(out, f.name)
		}
	}
	return out
}

// Find returns what the run in dir (read as run, its study s) shows, in
// the order of finders.
func Find(dir string, run *results.Run, s *study.Study) []advise.Sighting {
	var out []advise.Sighting
	for _, f := range finders {
		if f.needsStudy && s == nil {
			continue
		}
		if got := f.find(run, s); got.text != "" {
			out = append(out, advise.Sighting{Finding: f.name, Run: dir, Text: got.text, Cells: got.cells,
				Emulated: run.HasEnv && run.Env.Engine != "kube", Lean: got.lean})
		}
	}
	return out
}

// leanOf is a sighting's lean from its decisions: for when some decided
// cell went the answering rules' way (toward) and none the other way
// (away), mixed when cells went both ways, against when cells were
// decided and none went toward, undecided when none was decided.
func leanOf(t tally, toward, away string) string {
	switch {
	case t.n[toward] > 0 && t.n[away] > 0:
		return advise.LeanMixed
	case t.n[toward] > 0:
		return advise.LeanFor
	case t.decided() > 0:
		return advise.LeanAgainst
	}
	return advise.LeanUndecided
}
