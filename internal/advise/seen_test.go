package advise

import (
	"strings"
	"testing"
	"time"
)

// One core bound on the run's client node alone is no reason for rfs
// on the server node advise inspects: the sighting goes under its own
// heading, and the run's summary says so.
func TestSightingOnTheClientNode(t *testing.T) {
	rfs := &Rule{Name: "rfs", Answers: []string{FindingOneCore}}
	rep := &Report{Candidates: []Entry{{Result: Result{Rule: rfs, Name: "rfs", Status: Candidate, Why: []string{"cores_per_rx_queue >= 2: yes"}}}}}
	rep.AddSightings("/runs/k", []Sighting{{Finding: FindingOneCore, Run: "/runs/k", Text: "1 of its 2 cells were bound by one core: ... on the client node", Lean: LeanClientNode}})
	md, html := pages(t, rep)
	why := md[strings.Index(md, "**Why here:**"):strings.Index(md, "**Knob:**")]
	if !strings.HasPrefix(why, "**Why here:**\n\n- cores_per_rx_queue >= 2: yes\n\n**In your run, on the client node, which advise does not inspect:**\n\n- in the run /runs/k: 1 of its 2 cells") {
		t.Errorf("the candidate's section:\n%s", why)
	}
	if !strings.Contains(md, "the run showed it on its client node alone, which advise does not inspect (below)") ||
		!strings.Contains(html, "<b>In your run, on the client node, which advise does not inspect:</b>") {
		t.Errorf("pages:\n%s", md)
	}
}

// Under --rule busy-poll, a one-core finding said "no rule answers it",
// though rfs and irq-spread do: they were not evaluated, which the pages
// now say. With every rule evaluated, nothing is said of it.
func TestSightingRulesNotEvaluated(t *testing.T) {
	in := load(t, "this-machine")
	rules, err := Lookup("busy-poll")
	if err != nil {
		t.Fatal(err)
	}
	rep := Build(rules, in, time.Now())
	rep.AddSightings("/runs/a", []Sighting{{Finding: FindingOneCore, Run: "/runs/a", Text: "1 of its 2 cells were bound by one core"}})
	md, _ := pages(t, rep)
	if want := "1 of its 2 cells were bound by one core; answered by rfs, irq-spread (not evaluated: --rule)."; !strings.Contains(md, want) {
		t.Errorf("advice.md lacks %q:\n%s", want, md)
	}
	all, err := Rules()
	if err != nil {
		t.Fatal(err)
	}
	rep = Build(all, in, time.Now())
	rep.AddSightings("/runs/a", []Sighting{{Finding: FindingOneCore, Run: "/runs/a", Text: "bound"}})
	if ne := rep.Seen[0].NotEvaluated; len(ne) != 0 {
		t.Errorf("every rule evaluated, yet %v not", ne)
	}
}
