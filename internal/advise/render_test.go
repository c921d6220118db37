package advise

import (
	"bytes"
	"strings"
	"testing"
)

// An undecided candidate's page says why each cell stopped and the
// rerun that would decide it, in words a shell takes back; a decided
// one says neither.
func TestToDecide(t *testing.T) {
	e := Entry{Result: Result{Name: "rfs"}, Verdict: Undecided, Proof: &Proof{
		Cells: []ProofCell{
			{Workload: "tcp", Replicas: 1, Decision: "undecided", Stop: "futile after 5 trials: at 10 the interval would still cover 1"},
			{Workload: "tcp", Replicas: 4, Decision: "equal"},
		},
		Rerun: &ProofRerun{Args: []string{"--rule", "rfs", "--study", "my study.yaml", "--set", "replicas=[1,4]", "--set", "trials.max=14", "--budget", "8m0s"},
			Cells: 1, Undecided: 1, Seconds: 335.6},
	}}
	got := ToDecide(e)
	for _, want := range []string{
		"tcp at 1 pair(s) stopped: futile after 5 trials",
		"would decide 1 of the 1 undecided cells",
		"cnibench advise --prove --rule rfs --study 'my study.yaml' --set 'replicas=[1,4]' --set trials.max=14 --budget 8m",
		"about 5m36s of trials",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ToDecide lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "at 4 pair(s)") {
		t.Errorf("a decided cell is listed as stopped undecided:\n%s", got)
	}
	rep := &Report{Candidates: []Entry{e}}
	md, html := pages(t, rep)
	if !strings.Contains(md, "**To decide:** tcp at 1 pair(s)") || !strings.Contains(html, "<b>To decide:</b> tcp at 1 pair(s)") {
		t.Errorf("pages lack the To decide line:\n%s", md)
	}
	e.Verdict = Rejected
	if got := ToDecide(e); got != "" {
		t.Errorf("a rejected candidate: %q", got)
	}
}

// A proven candidate's verdict carries the cells behind it, in the table
// and in its section, on both pages.
func TestVerdictWhy(t *testing.T) {
	e := Entry{Result: Result{Name: "rfs"}, Measured: "bitrate ...", Verdict: Rejected,
		VerdictWhy: "worse in tcp at 4 pair(s) (0.961), though better in tcp at 1 pair(s) (1.135): a trade-off, not a gain"}
	rep := &Report{Candidates: []Entry{e}}
	md, html := pages(t, rep)
	want := "rejected: worse in tcp at 4 pair(s) (0.961), though better"
	if strings.Count(md, want) != 2 || strings.Count(html, want) != 2 {
		t.Errorf("the verdict's reason is not in the table and the section:\n%s", md)
	}
	e.VerdictWhy = ""
	if got := e.VerdictText(); got != Rejected {
		t.Errorf("without a reason: %q", got)
	}
}

// pages renders rep as advice.md and advice.html.
func pages(t *testing.T, rep *Report) (md, html string) {
	t.Helper()
	var m, h bytes.Buffer
	if err := rep.WriteMarkdown(&m); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&h); err != nil {
		t.Fatal(err)
	}
	return m.String(), h.String()
}

// A run's findings (advise --run) go to the candidates whose rule
// answers them and, all of them, to "What the run showed" with what
// answers each: a candidate, or the rule that would and why it is none
// here. A run that showed nothing says so.
func TestSightings(t *testing.T) {
	rfs := &Rule{Name: "rfs", Answers: []string{FindingOneCore, FindingSteering}}
	irq := &Rule{Name: "irq-spread", Answers: []string{FindingOneCore}}
	rep := &Report{Candidates: []Entry{{Result: Result{Rule: rfs, Name: "rfs", Status: Candidate}}},
		Others: []Result{{Rule: irq, Name: "irq-spread", Status: NotApplicable, Why: []string{"rx_queues >= 2: no (rx_queues = 1)"}}}}
	rep.AddSightings("/runs/a", []Sighting{
		{Finding: FindingOneCore, Run: "/runs/a", Text: "1 of its 2 cells were bound by one core"},
		{Finding: FindingSteering, Run: "/runs/a", Text: "rfs against baseline: better in 1"},
	})
	if got := rep.Candidates[0].Seen; len(got) != 2 {
		t.Fatalf("rfs answers both findings; its sightings: %+v", got)
	}
	md, html := pages(t, rep)
	for _, want := range []string{
		"## What the run showed\n\n- one-core (/runs/a): 1 of its 2 cells were bound by one core; answered by the candidate rfs (below).\n",
		"- steering (/runs/a): rfs against baseline: better in 1; answered by the candidate rfs (below).\n",
		"- in the run /runs/a: 1 of its 2 cells were bound by one core\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("advice.md lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(html, "<li>in the run /runs/a: rfs against baseline: better in 1</li>") {
		t.Errorf("advice.html lacks the candidate's sighting:\n%s", html)
	}
	// Without the candidate, the rule that would answer says why not.
	rep = &Report{Others: []Result{{Rule: irq, Name: "irq-spread", Status: NotApplicable, Why: []string{"rx_queues >= 2: no (rx_queues = 1)"}}}}
	rep.AddSightings("/runs/a", []Sighting{{Finding: FindingOneCore, Run: "/runs/a", Text: "bound"}})
	if md, _ := pages(t, rep); !strings.Contains(md, "bound; no candidate here: irq-spread: "+NotApplicable+": rx_queues >= 2: no (rx_queues = 1).") {
		t.Errorf("a finding no candidate answers:\n%s", md)
	}
	// Rules that are none here for the same first reason are one entry
	// on the pages (advice.json keeps each with all its reasons).
	over := func(name string, why ...string) Result {
		return Result{Rule: &Rule{Name: name, Answers: []string{FindingOverlay}}, Name: name, Status: NotApplicable, Why: why}
	}
	rep = &Report{Others: []Result{over("tunnel-mtu", "overlay_in_use: no", "tunnel_mtu_below_max: no"), over("tunnel-gro", "overlay_in_use: no"),
		{Rule: &Rule{Name: "macvlan"}, Name: "macvlan", Status: NotApplicable, Why: []string{"nic_is_physical: no"}}}}
	rep.AddSightings("/runs/c", []Sighting{{Finding: FindingOverlay, Run: "/runs/c", Text: "flannel against bridge: worse in 2"}})
	if md, _ := pages(t, rep); !strings.Contains(md, "worse in 2; no candidate here: tunnel-mtu, tunnel-gro: "+NotApplicable+": overlay_in_use: no.") ||
		len(rep.Seen[0].NotBy) != 2 || !strings.Contains(rep.Seen[0].NotBy[0], "tunnel_mtu_below_max") {
		t.Errorf("rules none here for one reason: %+v\n%s", rep.Seen, md)
	}
	// A run of emulated nodes: the machine read is not the run's nodes,
	// which the pages say.
	rep = &Report{Others: []Result{over("tunnel-gro", "overlay_in_use: no")}}
	rep.AddSightings("/runs/c", []Sighting{{Finding: FindingOverlay, Run: "/runs/c", Text: "flannel against bridge: worse in 2", Emulated: true}})
	if md, _ := pages(t, rep); !strings.Contains(md, "overlay_in_use: no (the rules read the inspected machine, not the run's nodes, which were network namespaces") {
		t.Errorf("a finding of emulated nodes:\n%s", md)
	}
	rep = &Report{}
	rep.AddSightings("/runs/b", nil)
	if md, html := pages(t, rep); !strings.Contains(md, "/runs/b: none of the findings the rules answer (one-core, steering, netfilter, overlay, idle-wake).") || !strings.Contains(html, "/runs/b: none of the findings") {
		t.Errorf("a run that showed nothing:\n%s", md)
	}
}

// A run's result against a candidate is no reason for it: a sighting
// that leans against (rfs worse than the baseline) or is undecided is
// said under its own heading on both pages, not under "Why here"; one
// that leans for it stays a reason. advice.json keeps each with its
// lean, and the run's summary says which way it went.
func TestSightingsAgainst(t *testing.T) {
	rfs := &Rule{Name: "rfs", Answers: []string{FindingOneCore, FindingSteering}}
	rep := &Report{Candidates: []Entry{{Result: Result{Rule: rfs, Name: "rfs", Status: Candidate, Why: []string{"cores_per_rx_queue >= 2: yes"}}}}}
	rep.AddSightings("/runs/w", []Sighting{
		{Finding: FindingSteering, Run: "/runs/w", Text: "rfs against baseline: worse in 2 of its cells", Lean: LeanAgainst},
		{Finding: FindingOneCore, Run: "/runs/w", Text: "1 of its 2 cells were bound by one core"},
	})
	rep.AddSightings("/runs/u", []Sighting{{Finding: FindingSteering, Run: "/runs/u", Text: "rfs against baseline: undecided in 2", Lean: LeanUndecided}})
	md, html := pages(t, rep)
	why := md[strings.Index(md, "**Why here:**"):strings.Index(md, "**Knob:**")]
	for _, want := range []string{
		"**Why here:**\n\n- cores_per_rx_queue >= 2: yes\n- in the run /runs/w: 1 of its 2 cells were bound by one core\n\n",
		"**In your run, against it:**\n\n- in the run /runs/w: rfs against baseline: worse in 2 of its cells\n",
		"**In your run, undecided:**\n\n- in the run /runs/u: rfs against baseline: undecided in 2\n",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("the candidate's section lacks %q:\n%s", want, why)
		}
	}
	if !strings.Contains(md, "worse in 2 of its cells; the candidate rfs answers it, and the run's decisions go against it (below).") {
		t.Errorf("the run's summary does not say the finding went against rfs:\n%s", md)
	}
	for _, want := range []string{
		"<p><b>Why here:</b></p><ul><li>cores_per_rx_queue &gt;= 2: yes</li><li>in the run /runs/w: 1 of its 2 cells were bound by one core</li></ul>",
		"<p><b>In your run, against it:</b></p><ul><li>in the run /runs/w: rfs against baseline: worse in 2 of its cells</li></ul>",
		"<p><b>In your run, undecided:</b></p><ul><li>in the run /runs/u: rfs against baseline: undecided in 2</li></ul>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("advice.html lacks %q:\n%s", want, html)
		}
	}
	if got := rep.Candidates[0].Seen; len(got) != 3 || got[0].Lean != LeanAgainst {
		t.Errorf("advice.json keeps every sighting with its lean (--prove narrows to all their cells): %+v", got)
	}
}

// A sighting whose decisions go both ways says it is a trade-off, not
// that the candidate answers it as a reason.
func TestAnswerTextMixed(t *testing.T) {
	s := Seen{Sighting: Sighting{Finding: FindingSteering, Lean: LeanMixed}, AnsweredBy: []string{"rfs"}}
	if got := s.AnswerText(); !strings.Contains(got, "go both ways: a trade-off") {
		t.Errorf("mixed sighting: %q", got)
	}
}
