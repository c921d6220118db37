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
		"cnibench advise --prove --rule rfs --study 'my study.yaml' --set 'replicas=[1,4]' --set trials.max=14 --budget 8m0s",
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
