package advise

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
)

// What a run showed (`advise --run DIR`): findings in a run directory
// that a rule's candidate answers, set beside the inspection's facts. The
// run's numbers are read by internal/seen (the statistics are a layer
// above this package); here are the findings' names, which a rule's
// `answers:` lists, and where the pages show them.

// Finding names: a new one is a name here, a finder in internal/seen and
// the rules that answer it.
const (
	// FindingOneCore: cells whose number was one core's limit, one core
	// busy while another idled (analysis.OneCoreCells).
	FindingOneCore = "one-core"
	// FindingSteering: a tuning with RPS or RFS measured against the
	// baseline tuning, and what was decided.
	FindingSteering = "steering"
	// FindingNetfilter: cells whose CPU cost per packet went a tenth or
	// more into netfilter.
	FindingNetfilter = "netfilter"
	// FindingOverlay: datapaths with a tunnel device measured against
	// one without, on inter-node cells.
	FindingOverlay = "overlay"
	// FindingIdleWake: request/response cells measured on CPUs whose
	// idle states are slow to leave (cpuidle.SlowWake).
	FindingIdleWake = "idle-wake"
)

// Findings lists every finding name a rule's answers may use.
var Findings = []string{FindingOneCore, FindingSteering, FindingNetfilter, FindingOverlay, FindingIdleWake}

// Sighting is one finding in one run, in words with the run's numbers.
type Sighting struct {
	Finding string `json:"finding"`
	Run     string `json:"run"`
	Text    string `json:"text"`
	// Cells are the run's cells the finding showed in, all of them
	// (Text names a few): --prove measures a candidate that answers it
	// on the run's study narrowed to them.
	Cells []results.Cell `json:"cells"`
	// Emulated: the run's nodes were network namespaces cnibench built
	// (the local engine), not the inspected machine's pod network, so a
	// rule that reads a device the run had (an overlay's tunnel) may be
	// no candidate here while the run measured that device's cost.
	Emulated bool `json:"emulated,omitempty"`
	// Lean is which way the run's decisions point for the rules that
	// answer the finding (LeanFor, LeanAgainst, LeanMixed,
	// LeanUndecided), or LeanClientNode for one that showed on the node
	// advise does not inspect; empty is LeanFor, as for a finding that
	// is itself the problem those rules answer (one-core, netfilter).
	Lean string `json:"lean,omitempty"`
}

// Leans of a sighting. Every rule that answers a finding proposes the
// same way (rfs steers; native-routing, overlay-offload, tunnel-gro and
// tunnel-mtu each cut what an overlay costs), so one lean per sighting
// says it for all of them.
const (
	// LeanFor: some decided cell points the answering rules' way (a
	// steering tuning better than the baseline, an overlay worse than
	// the datapath without one): a reason for the candidate.
	LeanFor = "for"
	// LeanAgainst: cells were decided and none points that way (steering
	// worse than or equal to the baseline, an overlay equal to or better
	// than the datapath without one): the run's result against the
	// candidate, never a reason for it.
	LeanAgainst = "against"
	// LeanUndecided: no cell was decided; the run says nothing either way.
	LeanUndecided = "undecided"
	// LeanMixed: decided cells point both ways (a steering tuning better
	// in one cell and worse in others): a trade-off, which --prove calls
	// rejected, so no reason for the candidate either.
	LeanMixed = "mixed"
	// LeanClientNode: the finding showed on the run's client node alone
	// (one-core), which advise does not inspect and the candidates do not
	// tune: no reason for a knob of the server node.
	LeanClientNode = "client-node"
)

// For reports whether the sighting is a reason for the candidates that
// answer it (Lean, empty being LeanFor).
func (s Sighting) For() bool { return s.Lean == "" || s.Lean == LeanFor }

// SeenLeaning are the candidate's sightings that lean as lean does
// (LeanFor includes the empty lean): only those for it are reasons
// ("Why here"); the others go under their own heading on the pages.
func (e Entry) SeenLeaning(lean string) []Sighting {
	var out []Sighting
	for _, s := range e.Seen {
		if l := s.Lean; l == lean || (l == "" && lean == LeanFor) {
			out = append(out, s)
		}
	}
	return out
}

// Seen is a sighting with what this report makes of it: the candidates
// whose rule answers it, or why the rules that would are not candidates
// here.
type Seen struct {
	Sighting
	AnsweredBy []string `json:"answered_by"`
	// NotBy are the rules that answer it but are no candidate on this
	// machine, each with its status and why ("rfs: not applicable:
	// rfs_enabled = true").
	NotBy []string `json:"not_by,omitempty"`
	// NotEvaluated are the rules that answer it but were not evaluated
	// (--rule named others): no word on them either way.
	NotEvaluated []string `json:"not_evaluated,omitempty"`
	// LeftOut are the rules that answer it but read what the run's
	// record lacks (--no-inspect, LeftOut): no word on them either.
	LeftOut []string `json:"left_out,omitempty"`
	// notBy is NotBy for the pages: rules with the same status and
	// first reason together (four overlay rules on a machine without an
	// overlay are one line, not four).
	notBy []string
	// elsewhere: a rule is not applicable here, and the run's nodes were
	// emulated; the pages say where the rule would be read.
	elsewhere bool
}

// AddSightings sets the sightings of a run directory beside the
// report (none: the run was read and showed nothing): each to the
// candidates whose rule answers its finding (Entry.Seen, whatever its
// lean: --prove narrows a candidate's A/B to the cells of all of them;
// the pages give as reasons only those that lean for it), and all of
// them, with what answers each, in Report.Seen.
func (r *Report) AddSightings(run string, ss []Sighting) {
	r.Runs = append(r.Runs, run)
	for _, s := range ss {
		seen := Seen{Sighting: s, AnsweredBy: []string{}}
		for i := range r.Candidates {
			c := &r.Candidates[i]
			if slices.Contains(c.Rule.Answers, s.Finding) {
				c.Seen = append(c.Seen, s)
				seen.AnsweredBy = append(seen.AnsweredBy, c.Name)
			}
		}
		var why []string // status and first reason, in order
		names := map[string][]string{}
		for _, o := range r.Others {
			if slices.Contains(o.Rule.Answers, s.Finding) && o.Status == LeftOut {
				seen.LeftOut = append(seen.LeftOut, o.Name)
				continue
			}
			if slices.Contains(o.Rule.Answers, s.Finding) {
				seen.NotBy = append(seen.NotBy, fmt.Sprintf("%s: %s: %s", o.Name, o.Status, strings.Join(o.Why, "; ")))
				w := o.Status
				if len(o.Why) > 0 {
					w += ": " + o.Why[0]
				}
				if names[w] == nil {
					why = append(why, w)
				}
				names[w] = append(names[w], o.Name)
				// From a run's record the rules read the run's own
				// machine, the one its namespaces ran on.
				seen.elsewhere = seen.elsewhere || (s.Emulated && o.Status == NotApplicable && !r.fromRecord())
			}
		}
		for _, w := range why {
			seen.notBy = append(seen.notBy, strings.Join(names[w], ", ")+": "+w)
		}
		seen.NotEvaluated = r.notEvaluated(s.Finding)
		r.Seen = append(r.Seen, seen)
	}
}

// notEvaluated are the rules that answer finding and that Build did not
// evaluate (--rule limited them); none where it evaluated all.
func (r *Report) notEvaluated(finding string) []string {
	if r.evaluated == nil {
		return nil
	}
	all, err := Rules()
	if err != nil {
		return nil // the rules loaded for Build; a test loads them all
	}
	var out []string
	for _, rule := range all {
		if slices.Contains(rule.Answers, finding) && !slices.Contains(r.evaluated, rule.Name) {
			out = append(out, rule.Name)
		}
	}
	return out
}

// nothingSeen is what the pages say of a run that showed no finding.
func nothingSeen() string {
	return "none of the findings the rules answer (" + strings.Join(Findings, ", ") + ")"
}

// AnswerText says what answers a sighting, for the pages.
func (s Seen) AnswerText() string {
	switch {
	case len(s.AnsweredBy) > 0 && s.Lean == LeanAgainst:
		return "the candidate " + strings.Join(s.AnsweredBy, ", ") + " answers it, and the run's decisions go against it (below)"
	case len(s.AnsweredBy) > 0 && s.Lean == LeanMixed:
		return "the candidate " + strings.Join(s.AnsweredBy, ", ") + " answers it, and the run's decisions go both ways: a trade-off (below)"
	case len(s.AnsweredBy) > 0 && s.Lean == LeanClientNode:
		return "the candidate " + strings.Join(s.AnsweredBy, ", ") + " answers it on the node advise inspects, and the run showed it " +
			"on its client node alone, which advise does not inspect (below)"
	case len(s.AnsweredBy) > 0 && s.Lean == LeanUndecided:
		return "the candidate " + strings.Join(s.AnsweredBy, ", ") + " answers it; the run decided none of its cells (below)"
	case len(s.AnsweredBy) > 0:
		return "answered by the candidate " + strings.Join(s.AnsweredBy, ", ") + " (below)"
	case len(s.notBy) > 0:
		text := "no candidate here: " + strings.Join(s.notBy, " / ")
		if len(s.NotEvaluated) > 0 {
			text += " / " + strings.Join(s.NotEvaluated, ", ") + ": not evaluated (--rule)"
		}
		if len(s.LeftOut) > 0 {
			text += " / " + strings.Join(s.LeftOut, ", ") + ": " + leftOutShort
		}
		if s.elsewhere {
			text += " (the rules read the inspected machine, not the run's nodes, which were network namespaces " +
				"cnibench built for the run: run advise on a node whose pod network has the run's datapath)"
		}
		return text
	case len(s.NotEvaluated) > 0 || len(s.LeftOut) > 0:
		var by []string
		if len(s.NotEvaluated) > 0 {
			by = append(by, strings.Join(s.NotEvaluated, ", ")+" (not evaluated: --rule)")
		}
		if len(s.LeftOut) > 0 {
			by = append(by, strings.Join(s.LeftOut, ", ")+" ("+leftOutShort+")")
		}
		return "answered by " + strings.Join(by, " and ")
	}
	return "no rule answers it"
}

// leftOutShort says why a rule that answers a finding was left out.
const leftOutShort = "left out: this machine was not inspected (--no-inspect), and the run's env.json does not record what it reads"
