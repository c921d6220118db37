package report

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Trials counted though disturbed (the noise guard's repeats used up) are
// named where a cell's decision is given, its own and its reference's,
// and a rerun's estimates say their spread may be the machine's; the
// repeated attempts, which did not count, are not.
func TestDisturbedTrialsNamed(t *testing.T) {
	cell := func(tn string) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	s := &study.Study{}
	s.Spec.Baseline = "baseline"
	s.Spec.Tunings = []study.Tuning{{Name: "baseline"}, {Name: "rps"}, {Name: "rfs"}, {Name: "rfs+"}}
	s.Spec.Trials = study.Trials{Min: 3, Max: 10}
	r, lo, hi := 0.84, 0.73, 0.97
	stops := []results.Stop{
		{Cell: cell("baseline"), N: 4, TrialSeconds: 9},
		{Cell: cell("rps"), N: 4, TrialSeconds: 9, Status: "budget", Decision: "undecided", DecisionReason: "covers 1", ToDecide: 143, Versus: "baseline"},
		{Cell: cell("rfs"), N: 5, TrialSeconds: 9, Status: "target", Look: 5, Decision: "worse", Ratio: &r, Low: &lo, High: &hi,
			Method: "paired-t", Confidence: 0.9875, Versus: "baseline"},
		{Cell: cell("rfs+"), N: 4, TrialSeconds: 9, Status: "budget", Decision: "undecided", DecisionReason: "covers 1", ToDecide: 7, Versus: "baseline"},
	}
	marked := []analysis.Marked{
		{Cell: cell("baseline"), Trial: 1, Attempt: 1, Why: "disturbed, repeated: steal 20.8% > 10%"},
		{Cell: cell("baseline"), Trial: 1, Attempt: 2, Counted: true},
		{Cell: cell("rps"), Trial: 1, Attempt: 2, Counted: true},
		{Cell: cell("rps"), Trial: 3, Attempt: 2, Counted: true},
		{Cell: cell("rfs+"), Trial: 2, Attempt: 1, Why: "disturbed, repeated: steal 16.9% > 10%"},
	}
	d := Disturbed{analysis.CountedDisturbed(marked), s}
	lines := DecisionLines(stops, d)
	want := []string{
		"calico-vxlan tcp rps r=1: undecided after 4 trials (budget): covers 1; about 143 trials would decide it if its difference and spread held; " +
			"2 of its 4 trials and 1 of baseline's 4 counted though disturbed (repeats used up)",
		"calico-vxlan tcp rfs r=1: WORSE, 0.840 [0.730, 0.970] paired-t (98.75%), n=5; 1 of baseline's 4 trials counted though disturbed (repeats used up)",
	}
	if len(lines) != 3 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("decision lines:\n%s\nwant the first two\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	m := analysis.Model{Stops: stops, Marked: marked}
	tb := stopsTable(m, s)
	if why := tb.Rows[0][6]; !strings.HasSuffix(why, "; 1 of its 4 trials counted though disturbed (repeats used up): Marked trials") {
		t.Errorf("the baseline's row: %q", why)
	}
	if why := tb.Rows[3][6]; strings.Contains(why, "disturbed") && !strings.Contains(why, "baseline's") {
		t.Errorf("rfs+'s repeated attempt, which did not count, is named: %q", why)
	}
	// Without the study the reference is not known: the cell's own.
	if why := stopsTable(m, nil).Rows[1][6]; !strings.HasSuffix(why, "; 2 of its 4 trials counted though disturbed (repeats used up): Marked trials") {
		t.Errorf("without the study: %q", why)
	}
	// Both undecided cells lean on the disturbed baseline.
	if l := RerunLine(stops, s, d); !strings.HasSuffix(l, "; the spread of both undecided cells includes trials counted though disturbed "+
		"(the noise guard's repeats used up): on a quiet machine fewer may do") {
		t.Errorf("rerun line: %s", l)
	}
	if l := RerunLine(stops, s, Disturbed{}); strings.Contains(l, "disturbed") {
		t.Errorf("rerun line of a quiet run: %s", l)
	}
}

// The glance marks a cell whose trials, or its baseline's, counted
// disturbed ones, and its caption says what the mark means only when some
// cell has it.
func TestGlanceMarksDisturbed(t *testing.T) {
	s := &study.Study{}
	s.Spec.Baseline = "baseline"
	s.Spec.Tunings = []study.Tuning{{Name: "baseline"}, {Name: "rps"}, {Name: "rfs"}}
	cell := func(tn string, reps int) results.Cell {
		return results.Cell{Datapath: "bridge", Tuning: tn, Workload: "tcp", Replicas: reps}
	}
	marked := []analysis.Marked{{Cell: cell("baseline", 1), Counted: true}, {Cell: cell("rfs", 4), Counted: true},
		{Cell: cell("rps", 4), Why: "disturbed, repeated: steal 12% > 10%"}}
	d := Disturbed{analysis.CountedDisturbed(marked), s}
	for _, c := range []struct {
		cell results.Cell
		want string
	}{
		{cell("rps", 1), ", disturbed"}, // its baseline's
		{cell("rfs", 4), ", disturbed"}, // its own
		{cell("rps", 4), ""},            // repeated, not counted
	} {
		if got := disturbedMark(analysis.Row{SummaryRow: results.SummaryRow{Cell: c.cell}}, d, nil); got != c.want {
			t.Errorf("%s: %q, want %q", CellName(c.cell), got, c.want)
		}
	}
	if !strings.Contains(glanceCaption(analysis.Model{Baseline: "baseline", Marked: marked}), `"disturbed" marks`) {
		t.Error("the caption does not say what the mark means")
	}
	if strings.Contains(glanceCaption(analysis.Model{Baseline: "baseline", Marked: marked[2:]}), `"disturbed"`) {
		t.Error("the caption explains a mark no cell has")
	}
}
