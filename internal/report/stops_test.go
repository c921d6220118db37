package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

func hw(x float64) *float64 { return &x }

// A datapath study's end of run says how many cells met the precision
// target and names those that did not with what they reached; failed
// cells are left out, cells that stopped on their decision first
// (DecisionLines' business) are counted, and a long list is cut with the
// count of the rest.
func TestPrecisionLines(t *testing.T) {
	cell := func(dp string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1}
	}
	stops := []results.Stop{
		{Cell: cell("bridge"), Metric: "bitrate", Status: "target", N: 3, HalfWidth: hw(0.012), Of: "mean", Target: 0.02},
		{Cell: cell("ovs"), Metric: "bitrate", Status: "max", N: 10, HalfWidth: hw(0.031), Of: "mean", Target: 0.02},
		// Missed by a hair: rounded to the target's digit it read "±2.0%
		// ... (target ±2.0%)" as if met.
		{Cell: cell("gre"), Metric: "bitrate", Status: "max", N: 10, HalfWidth: hw(0.0204), Of: "mean", Target: 0.02},
		{Cell: cell("macvlan"), Metric: "bitrate", Status: "failed", Target: 0.02, Failed: "exit 1"},
		{Cell: cell("host"), Metric: "bitrate", Status: "target", N: 5, HalfWidth: hw(0.04), Of: "mean", Target: 0.02, Decision: "worse"},
		{Cell: cell("ipvlan"), Metric: "bitrate", Status: "target", N: 3, HalfWidth: hw(0.015), Of: "mean", Target: 0.02, Decision: "equal"},
		{Cell: cell("veth"), Metric: "bitrate", Status: "max", N: 1, Of: "mean", Target: 0.02},
		{Cell: cell("dummy"), Metric: "bitrate", Status: "max", N: 3, Decision: "undecided"},
	}
	got := PrecisionLines(stops)
	want := []string{
		"precision target ±2.0%: met in 2 of 6 cells; 1 without an interval (fewer than 2 valid trials); 1 stopped on their decision before it",
		"  ovs tcp baseline r=1: ±3.1% of mean bitrate (target ±2.0%) after 10 trials (max)",
		"  gre tcp baseline r=1: ±2.04% of mean bitrate (target ±2.0%) after 10 trials (max)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if PrecisionLines(stops[7:]) != nil || PrecisionLines([]results.Stop{{Status: "max", N: 5}}) != nil {
		t.Error("lines for a run without a precision target on uncompared cells")
	}
	var many []results.Stop
	for i := range maxListed + 3 {
		many = append(many, results.Stop{Cell: cell(fmt.Sprint("dp", i)), Metric: "bitrate", Status: "max", N: 4, HalfWidth: hw(0.05), Of: "mean", Target: 0.02})
	}
	got = PrecisionLines(many)
	if len(got) != maxListed+2 || got[len(got)-1] != "  ... and 3 more cells short of the target (the report's repetitions table)" ||
		!strings.Contains(got[1], "±5.0% of mean bitrate") {
		t.Errorf("long list:\n%s", strings.Join(got, "\n"))
	}
	// One trial per cell (a quick profile): not judged, said in one line.
	for i := range many {
		many[i].N, many[i].HalfWidth = 1, nil
	}
	got = PrecisionLines(many)
	if want := "precision target ±2.0%: not judged, none of the 11 cells has an interval (fewer than 2 valid trials each)"; len(got) != 1 || got[0] != want {
		t.Errorf("one trial per cell:\n%s\nwant %s", strings.Join(got, "\n"), want)
	}
}

// TestDecisionLines: the end of an adaptive run names each decision with
// its interval, says when a decision came at the closing look of a cell
// the budget stopped, and why an undecided cell is so.
func TestDecisionLines(t *testing.T) {
	cell := func(tn string) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	r, lo, hi := 0.72, 0.60, 0.86
	stops := []results.Stop{
		{Cell: cell("rfs"), Metric: "bitrate", Status: "budget", N: 4, Look: 4, Decision: "worse",
			Ratio: &r, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875},
		{Cell: cell("rfs+"), Metric: "bitrate", Status: "target", N: 3, Look: 3, Decision: "worse",
			Ratio: &r, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875},
		{Cell: cell("rps"), Metric: "bitrate", Status: "futile", N: 5, Look: 5, Decision: "undecided", DecisionReason: "covers 1", ToDecide: 41},
		{Cell: cell("rps+"), Metric: "bitrate", Status: "budget", N: 0, Decision: "undecided", DecisionReason: "no decision before 3 trials",
			Reason: "the remaining budget 2s cannot pay for another trial (9s)"},
	}
	want := []string{
		"calico-vxlan tcp rfs r=1: WORSE, 0.720 [0.600, 0.860] paired-t (98.75%), n=4 (judged when the budget stopped it)",
		"calico-vxlan tcp rfs+ r=1: WORSE, 0.720 [0.600, 0.860] paired-t (98.75%), n=3",
		"calico-vxlan tcp rps r=1: undecided after 5 trials (futile): covers 1; about 41 trials would decide it if its difference and spread held",
		"calico-vxlan tcp rps+ r=1: not measured (budget): the remaining budget 2s cannot pay for another trial (9s)",
	}
	if got := DecisionLines(stops, Disturbed{}); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Cells of a single trial (a one-trial quick profile) share a line.
	var one []results.Stop
	for i := range 10 {
		c := cell("rps")
		c.Replicas = i + 1
		one = append(one, results.Stop{Cell: c, Metric: "bitrate", Status: "max", N: 1, Valid: 1, Look: 1, Decision: "undecided",
			DecisionReason: "after 1 trial, at 95% confidence: no valid interval", Confidence: 0.95})
	}
	got := DecisionLines(append(one, stops[1]), Disturbed{})
	if len(got) != 2 || got[0] != want[1] || got[1] != "10 undecided after a single trial, too few for an interval: "+
		"calico-vxlan tcp rps r=1, calico-vxlan tcp rps r=2, calico-vxlan tcp rps r=3, calico-vxlan tcp rps r=4, "+
		"calico-vxlan tcp rps r=5, calico-vxlan tcp rps r=6, calico-vxlan tcp rps r=7, calico-vxlan tcp rps r=8 and 2 more" {
		t.Errorf("one-trial cells:\n%s", strings.Join(got, "\n"))
	}
	// A cell whose baseline was given up says so, decided (on the rounds
	// before) or not, and is offered no trials to decide it.
	why := "its baseline calico-vxlan/tcp/baseline/r1 was given up (trial 3 failed 3 attempts; last: iperf3 died)"
	gone := []results.Stop{stops[1], stops[2]}
	gone[0].VersusFailed, gone[1].VersusFailed, gone[1].ToDecide = why, why, 0
	got = DecisionLines(gone, Disturbed{})
	if len(got) != 2 || got[0] != want[1]+"; "+why || got[1] != "calico-vxlan tcp rps r=1: undecided after 5 trials (futile): covers 1; "+why {
		t.Errorf("cells of a given-up baseline:\n%s", strings.Join(got, "\n"))
	}
}

// TestStopsTableLook: the repetitions table says after how many trials a
// decision was judged, which for a cell the budget stopped between looks
// is the count it stopped at.
func TestStopsTableLook(t *testing.T) {
	r, lo, hi := 0.872, 0.767, 0.990
	m := analysis.Model{Baseline: "baseline", Stops: []results.Stop{{
		Cell:   results.Cell{Datapath: "calico-vxlan", Tuning: "rps+", Workload: "tcp", Replicas: 4},
		Metric: "bitrate", Status: "budget", N: 7, Valid: 7, Look: 7, Decision: "worse",
		Ratio: &r, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875,
	}}}
	tb := stopsTable(m, nil)
	if len(tb.Rows) != 1 || tb.Rows[0][5] != "0.872 [0.767, 0.990] paired-t (98.75%) after 7 trials" {
		t.Errorf("rows %q", tb.Rows)
	}
	// An undecided cell's why says about how many trials would decide it.
	m.Stops[0].Decision, m.Stops[0].Reason, m.Stops[0].ToDecide = "undecided", "futile after 7 trials", 23
	if why := stopsTable(m, nil).Rows[0][6]; why != "futile after 7 trials; about 23 trials would decide it if its difference and spread held" {
		t.Errorf("why %q", why)
	}
}

// In a study of datapaths the run's decisions are against the first
// datapath: the repetitions table and the end of `cnibench run` name it;
// runs from before stops.json recorded it compared with the baseline
// tuning.
func TestDecisionsNameWhatTheyCompareWith(t *testing.T) {
	r, lo, hi := 0.61, 0.56, 0.66
	stop := func(dp, versus string) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1},
			Metric: "bitrate", Status: "target", N: 3, Look: 3, Decision: "worse", Versus: versus,
			Ratio: &r, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875}
	}
	m := analysis.Model{Baseline: "baseline", Stops: []results.Stop{stop("macvlan", "bridge"), stop("ovs", "bridge")}}
	if h := stopsTable(m, nil).Head[4]; h != "decision vs bridge" {
		t.Errorf("head %q, want decision vs bridge", h)
	}
	for _, tc := range []struct {
		stops []results.Stop
		want  string
	}{
		{m.Stops, "bridge"},
		{[]results.Stop{stop("ovs", "")}, "the baseline"},
		{[]results.Stop{stop("ovs", "bridge"), stop("ovs", "rps")}, "the baseline"},
	} {
		if got := Versus(tc.stops, "the baseline"); got != tc.want {
			t.Errorf("Versus %+v = %q, want %q", tc.stops, got, tc.want)
		}
	}
}

// TestDecisionTally counts the decision lines' cells by verdict, in a
// fixed order, leaving out cells that were not compared.
func TestDecisionTally(t *testing.T) {
	stops := []results.Stop{
		{Decision: "worse"}, {Decision: "undecided"}, {Decision: "worse"}, {},
		{Decision: "equal", N: 3}, {Failed: "exit 1"}, {Decision: "better", N: 3}, {Decision: "undecided", N: 0},
	}
	for i := range stops[:3] {
		stops[i].N = 3
	}
	if got, want := DecisionTally(stops), "1 better, 2 worse, 1 equal, 1 undecided, 2 not measured"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := DecisionTally(stops[3:4]); got != "" {
		t.Errorf("no decisions: %q", got)
	}
}

// The end of a run with undecided cells says the trial maxima to rerun
// with, as the --set of the study's kind of trial count, the cells each
// would decide and what it would cost; the report's repetitions caption
// says the same.
func TestRerunLine(t *testing.T) {
	cell := func(tuning string) results.Cell {
		return results.Cell{Datapath: "bridge", Workload: "tcp", Tuning: tuning, Replicas: 1}
	}
	stops := []results.Stop{
		{Cell: cell("baseline"), N: 5, TrialSeconds: 6},
		{Cell: cell("rps"), N: 5, Look: 5, TrialSeconds: 6, Status: "futile", Decision: "undecided", ToDecide: 47, Versus: "baseline"},
		{Cell: cell("rps+"), N: 5, Look: 5, TrialSeconds: 6, Status: "futile", Decision: "undecided", ToDecide: 200, Versus: "baseline"},
		{Cell: cell("rfs"), N: 5, Look: 5, TrialSeconds: 6, Status: "budget", Decision: "undecided", Versus: "baseline"},
	}
	adaptive := &study.Study{}
	adaptive.Spec.Trials, adaptive.Spec.Budget.Duration = study.Trials{Min: 3, Max: 10}, 4*time.Minute
	fixed := &study.Study{}
	fixed.Spec.Trials = study.Fixed(5)
	got := RerunLine(stops, adaptive, Disturbed{})
	want := "to decide the 3 undecided cells, rerun with --set trials.max=N: 47 for 1 of them (about 19 min of trials), " +
		"200 for the 2 with an estimate (about 65 min; 1 without one up to 1000 trials); this run's trials took 2m, " +
		"within a budget of 4m that caps the rerun too (--budget, set-up included). Estimates from each cell's own difference and spread, " +
		"which in simulation decide 51-84% of such cells (docs/statistics.md)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := RerunLine(stops[:2], fixed, Disturbed{}); !strings.HasPrefix(got, "to decide the undecided cell, rerun with --set trials=47 (about 9m24s of trials); this run's trials took 1m.") {
		t.Errorf("fixed design: %s", got)
	}
	// One maximum deciding every undecided cell is no choice to offer.
	same := []results.Stop{stops[0], stops[1], stops[1]}
	same[2].Cell = cell("rfs+")
	if got := RerunLine(same, fixed, Disturbed{}); !strings.HasPrefix(got, "to decide the 2 undecided cells, rerun with --set trials=47 (about 14 min of trials);") {
		t.Errorf("one maximum for both: %s", got)
	}
	m := analysis.Model{Stops: stops}
	if c := stopsText(m, adaptive); !strings.HasPrefix(c, stopsCaption+" To decide the 3") || !strings.HasSuffix(c, "(docs/statistics.md).") {
		t.Errorf("caption: %s", c)
	}
	if RerunLine(stops[:1], adaptive, Disturbed{}) != "" || stopsText(analysis.Model{Stops: stops[:1]}, adaptive) != stopsCaption {
		t.Error("a run without undecided cells got a rerun line")
	}
	// With the command recorded, the rerun is spelled out in place of the
	// user's own --set of the key and budget: the maximum that decides
	// the most within an hour (this run's trials took 2 minutes), so 47,
	// not 200 (65 min).
	o := &results.Origin{Command: []string{"cnibench", "run", "./my study.yaml", "--set", "trials.max=10", "--budget", "4m0s"}}
	want = "cnibench run './my study.yaml' --set trials.max=47 --budget 24m"
	if got := RerunCommand(stops, adaptive, o); got != want {
		t.Errorf("command: got %s, want %s", got, want)
	}
	if got := RerunCommand(stops[:2], fixed, o); !strings.HasSuffix(got, "--budget 4m0s --set trials=47") {
		t.Errorf("fixed design's command: %s", got)
	}
	m.Origin = o
	if c := stopsText(m, adaptive); !strings.HasSuffix(c, "(docs/statistics.md). The command: "+want) {
		t.Errorf("caption with the command: %s", c)
	}
	if RerunCommand(stops, adaptive, nil) != "" || RerunCommand(stops[:1], adaptive, o) != "" {
		t.Error("a rerun command without a recorded command, or without undecided cells")
	}
}

// The caption's 5% is a bound per cell, not for the run: a run of many
// compared cells can hold several wrong calls, and the caption says so.
func TestStopsCaptionPerCell(t *testing.T) {
	if !strings.Contains(stopsCaption, "within 5% per cell over all looks (a run of K compared cells may hold up to 0.05·K wrong calls)") {
		t.Errorf("caption: %s", stopsCaption)
	}
}

// A cell stopped early on its precision target gets the caption's warning
// that its plain interval is optimistic; one that ran its fixed count
// does not.
func TestPrecisionStopNote(t *testing.T) {
	stop := results.Stop{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1},
		Status: "target", N: 4, Target: 0.02, HalfWidth: hw(0.018)}
	if c := stopsText(analysis.Model{Stops: []results.Stop{stop}, TrialsMin: 3, TrialsPlanned: 10}, nil); !strings.Contains(c, precisionStopNote) {
		t.Errorf("an early precision stop without the warning: %s", c)
	}
	stop.N = 10
	if c := stopsText(analysis.Model{Stops: []results.Stop{stop}, TrialsMin: 10, TrialsPlanned: 10}, nil); c != stopsCaption {
		t.Errorf("a fixed count that met its target got: %s", c)
	}
}

// A one-trial tour's end says how to get decisions, naming the study's
// decide profile where it has one; a run with an interval somewhere, or
// with nothing compared, gets no such line.
func TestTourLine(t *testing.T) {
	one := func(dp string) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1},
			Status: "max", N: 1, Decision: "undecided", Versus: "flannel"}
	}
	stops := []results.Stop{{Cell: results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "tcp", Replicas: 1}, N: 1},
		one("cilium"), one("weave")}
	withDecide := &study.Study{Profiles: map[string]any{"decide": map[string]any{}, "quick": map[string]any{}}}
	if got := TourLine(stops, withDecide, nil); got != "one trial per cell gives no interval, so nothing was decided: "+
		"for decisions, run with --profile decide, or --set 'trials={min: 3, max: 6}'" {
		t.Errorf("with a decide profile: %q", got)
	}
	if got := TourLine(stops, &study.Study{}, nil); !strings.HasSuffix(got, "run with --set 'trials={min: 3, max: 6}'") {
		t.Errorf("without one: %q", got)
	}
	// Read back from a run directory the study has no profiles; the
	// origin has their names, and the command to run.
	o := &results.Origin{Command: []string{"cnibench", "run", "cni-compare", "--quick", "--set", "replicas=[1]"}, Profiles: []string{"decide", "quick"}}
	if got := TourLine(stops, &study.Study{}, o); !strings.Contains(got, "run with --profile decide, or") {
		t.Errorf("profiles from the origin: %q", got)
	}
	if got := TourCommand(stops, &study.Study{}, o); got != "cnibench run cni-compare --set 'replicas=[1]' --profile decide" {
		t.Errorf("command with the decide profile: %q", got)
	}
	o.Profiles = nil
	if got := TourCommand(stops, &study.Study{}, o); got != "cnibench run cni-compare --quick --set 'replicas=[1]' --set 'trials={min: 3, max: 6}'" {
		t.Errorf("command without one: %q", got)
	}
	if TourCommand(stops, withDecide, nil) != "" {
		t.Error("a tour command without a recorded command")
	}
	decided := append([]results.Stop(nil), stops...)
	decided[2].N, decided[2].Low = 3, hw(0.9)
	if TourLine(decided, withDecide, o) != "" || TourLine(stops[:1], withDecide, o) != "" || TourCommand(decided, withDecide, o) != "" {
		t.Error("a tour line for a run with an interval, or with nothing compared")
	}
}

// The rerun of a study of several datapaths, one of them undecided
// against the first, runs those two: the line and the command narrow the
// study's datapaths, and the cost counts their cells only.
func TestRerunNarrowed(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"bridge", "calico-vxlan", "cilium"}, Tools: testCatalog.Tools}
	s, err := study.Parse("s.yaml", []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge, calico-vxlan, cilium]
  workloads: [{name: tcp, tool: iperf3}]
  trials: 3
  duration: 5s
`), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(dp string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1}
	}
	stops := []results.Stop{{Cell: cell("bridge"), N: 3, TrialSeconds: 10},
		{Cell: cell("calico-vxlan"), N: 3, TrialSeconds: 10, Decision: "worse", Versus: "bridge"},
		{Cell: cell("cilium"), N: 3, TrialSeconds: 10, Decision: "undecided", ToDecide: 9, Versus: "bridge"}}
	want := "to decide the undecided cell, rerun with --set 'datapaths=[bridge, cilium]' --set trials=9 (about 3m of trials); this run's trials took 1m30s."
	if got := RerunLine(stops, s, Disturbed{}); !strings.HasPrefix(got, want) {
		t.Errorf("line:\n%s\nwant it to start\n%s", got, want)
	}
	o := &results.Origin{Command: []string{"cnibench", "run", "s.yaml", "--set", "datapaths=[bridge, calico-vxlan, cilium]"}}
	if got := RerunCommand(stops, s, o); got != "cnibench run s.yaml --set 'datapaths=[bridge, cilium]' --set trials=9" {
		t.Errorf("command: %s", got)
	}
}

// A run of one trial per cell with nothing compared (workloads --quick)
// has no repetitions table: each row would say "1 (1 valid), no
// interval, max"; a compared cell, a failed one or a second trial keeps
// it.
func TestSingleTrialsNoStopsTable(t *testing.T) {
	one := func(tuning string) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}, Metric: "bitrate", Status: "max", N: 1, Valid: 1}
	}
	if tb := stopsTable(analysis.Model{Stops: []results.Stop{one("a"), one("b")}}, nil); len(tb.Rows) != 0 {
		t.Errorf("single trials: %d rows, want none", len(tb.Rows))
	}
	for name, change := range map[string]func(*results.Stop){
		"compared": func(s *results.Stop) { s.Decision = "undecided" },
		"failed":   func(s *results.Stop) { s.Failed = "trial 1 failed 3 attempts" },
		"two":      func(s *results.Stop) { s.N = 2 },
	} {
		b := one("b")
		change(&b)
		if tb := stopsTable(analysis.Model{Stops: []results.Stop{one("a"), b}}, nil); len(tb.Rows) != 2 {
			t.Errorf("%s: %d rows, want 2", name, len(tb.Rows))
		}
	}
}

// A run whose budget ran out before its cells had their minimum says
// what budget the minimum needs, not to run more trials per cell: in an
// rps-rfs run with --budget 6m on 2026-12-05, 5 cells ran one trial and
// 25 none, and the end of the run offered the one-trial tour's
// 'trials={min: 3, max: 6}' though the study asked for 3 to 20.
func TestBudgetLine(t *testing.T) {
	cell := func(tuning string, r int) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Workload: "tcp", Tuning: tuning, Replicas: r}
	}
	stops := []results.Stop{
		{Cell: cell("baseline", 1), Status: "budget"},
		{Cell: cell("rps", 1), Status: "budget", Decision: "undecided", Versus: "baseline"},
		{Cell: cell("baseline", 2), Status: "budget", N: 1, TrialSeconds: 30},
		{Cell: cell("rps", 2), Status: "budget", N: 1, TrialSeconds: 36, Decision: "undecided", Versus: "baseline"},
	}
	s := &study.Study{}
	s.Spec.Trials, s.Spec.Budget.Duration = study.Trials{Min: 3, Max: 20}, 6*time.Minute
	o := &results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--budget", "6m", "--set", "replicas=[1,2]"}}
	want := "the budget of 6m ran out before 4 cells had the minimum of 3 trials, so more trials alone will not decide them: " +
		"the minimum of all 4 cells takes about 6m36s at this run's 33s a trial; rerun with --budget 8m or more, or with fewer cells"
	if got := BudgetLine(stops, s, 0); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := BudgetCommand(stops, s, o, 0); got != "cnibench run rps-rfs --set 'replicas=[1,2]' --budget 8m" {
		t.Errorf("command: %q", got)
	}
	if TourLine(stops, s, o) != "" || TourCommand(stops, s, o) != "" {
		t.Error("a design of 3 to 20 trials cut by its budget offered the one-trial tour's way to decisions")
	}
	steps := Next(stops, s, o, 0, nil, Disturbed{})
	var lines []string
	for _, n := range steps {
		if n.Line != "" {
			lines = append(lines, n.Line)
		}
	}
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("next steps: %q", lines)
	}
	// Cells that had their minimum, or a run without a budget, or one
	// whose trials all failed (nothing says what a trial costs): no line.
	done := append([]results.Stop(nil), stops...)
	for i := range done {
		done[i].N, done[i].TrialSeconds = 3, 30
	}
	noBudget := &study.Study{}
	noBudget.Spec.Trials = s.Spec.Trials
	if BudgetLine(done, s, 0) != "" || BudgetLine(stops, noBudget, 0) != "" || BudgetLine(stops[:2], s, 0) != "" || BudgetCommand(stops, s, nil, 0) != "" {
		t.Error("a budget line where the budget did not cut the minimum, or without a command")
	}
	one := []results.Stop{stops[2], stops[3]}
	one[0].N = 3
	if got := BudgetLine(one, s, 0); !strings.Contains(got, "before 1 cell had the minimum of 3 trials") {
		t.Errorf("one cell: %q", got)
	}
	// What the budget paid, set-ups and repeats included (env.json's
	// machine_s), over the counted trials is what a trial costs: a
	// flannel-backends --quick run in the VM paid 13 s for trials of 8 s,
	// and the 9m it was told to rerun with would have run out again.
	whole := "the minimum of all 4 cells takes about 10 min at this run's 50s of machine time a counted trial " +
		"(its cluster set-ups, pauses and repeated or failed attempts included); rerun with --budget 11m or more"
	if got := BudgetLine(stops, s, 100*time.Second); !strings.Contains(got, whole) {
		t.Errorf("with the run's machine time:\n%s\nwant it to contain\n%s", got, whole)
	}
	if got := BudgetCommand(stops, s, o, 100*time.Second); got != "cnibench run rps-rfs --set 'replicas=[1,2]' --budget 11m" {
		t.Errorf("command with the run's machine time: %q", got)
	}
}
