package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		below  bool
		change float64
	}{
		{"bitrate < -5%", "bitrate", true, -0.05},
		{"bitrate<-5%", "bitrate", true, -0.05},
		{"rtt_p99_us > 10%", "rtt_p99_us", false, 0.10},
		{" cpp_total_ns > +2.5 % ", "cpp_total_ns", false, 0.025},
		// The daemons collector's names hold a node name: longer than the
		// 64 characters --fail-if took, which --metric accepted.
		{"daemon_calico-node_ip-10-0-12-34.eu-west-1.compute.internal_rss_bytes > +10%",
			"daemon_calico-node_ip-10-0-12-34.eu-west-1.compute.internal_rss_bytes", false, 0.10},
	} {
		r, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if r.Metric != tc.metric || r.Below != tc.below || math.Abs(r.Change-tc.change) > 1e-12 || r.Absolute {
			t.Errorf("%q: got %+v", tc.in, r)
		}
	}
	// Without %, a difference in the metric's unit, of any size.
	for in, want := range map[string]Rule{
		"retransmits > +50":    {Metric: "retransmits", Change: 50},
		"bitrate<-5e8":         {Metric: "bitrate", Below: true, Change: -5e8},
		" rtt_p99_us > 200 ":   {Metric: "rtt_p99_us", Change: 200},
		"lost_count < -150000": {Metric: "lost_count", Below: true, Change: -150000},
	} {
		r, err := Parse(in)
		want.Text, want.Absolute = strings.TrimSpace(in), true
		if err != nil || r != want {
			t.Errorf("%q: %+v %v, want %+v", in, r, err, want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for in, want := range map[string]string{
		"bitrate":          "want METRIC",
		"bitrate < five":   "not a number",
		"bitrate < Inf":    "not a number",
		"bitrate <= -5%":   "use < or >",
		"< -5%":            "not a metric name",
		"bit rate < -5%":   "not a metric name",
		"bit\trate < -5%":  "not a metric name",
		"bitrate < x%":     "not a number",
		"bitrate < -100%":  "out of range",
		"bitrate < NaN%":   "not a number",
		"bitrate < 1e400%": "not a number",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// around returns n values of mean m with relative spread sd, alternating
// around the mean (+sd, −sd, ...): a sample whose interval is known.
func around(m, sd float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = m * (1 + sd*float64(1-2*(i%2)))
	}
	return out
}

func TestCheck(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	rise := Rule{Text: "rtt > 10%", Metric: "rtt", Below: false, Change: 0.10}
	retx := Rule{Text: "retransmits > 10%", Metric: "retransmits", Below: false, Change: 0.10}
	base := around(100, 0.02, 10)
	for _, tc := range []struct {
		name string
		rule Rule
		cell Cell
		fail bool
		why  string
	}{
		{"significant regression beyond threshold", drop, Cell{Metric: "bitrate", A: base, B: around(90, 0.02, 10)}, true, "beyond -5.0%"},
		{"large but noisy", drop, Cell{Metric: "bitrate", A: base, B: around(80, 0.5, 4)}, false, "not significant"},
		{"significant but small", drop, Cell{Metric: "bitrate", A: base, B: around(98, 0.001, 10)}, false, "within the threshold"},
		{"improvement", drop, Cell{Metric: "bitrate", A: base, B: around(120, 0.02, 10)}, false, "within the threshold"},
		{"one trial a side: no interval, no evidence", drop, Cell{Metric: "bitrate", A: []float64{100}, B: []float64{50}}, true,
			"not enough trials to judge: 1 in A, 1 in B (an interval needs 2 on each side); a gate does not pass on no evidence"},
		{"one trial in B at -50%", drop, Cell{Metric: "bitrate", A: base, B: []float64{50}}, true, "not enough trials to judge: 10 in A, 1 in B"},
		{"missing in B", drop, Cell{Metric: "bitrate", A: base, Missing: true}, true, "no value in B"},
		{"B did not reach it", drop, Cell{Metric: "bitrate", A: base, Missing: true, Absent: NotReached}, true, "B did not reach it"},
		{"B's budget ran out", drop, Cell{Metric: "bitrate", A: base, Missing: true, Absent: BudgetOut}, true, "B's budget ran out before this cell"},
		{"latency rise", rise, Cell{Metric: "rtt", A: base, B: around(125, 0.02, 10)}, true, "beyond +10.0%"},
		{"latency fall", rise, Cell{Metric: "rtt", A: base, B: around(75, 0.02, 10)}, false, "within"},
		{"rise from zero", retx, Cell{Metric: "retransmits", A: make([]float64, 5), B: []float64{1000, 1100, 900, 1050, 980}}, true, "Welch"},
		{"zero stays zero", retx, Cell{Metric: "retransmits", A: make([]float64, 5), B: make([]float64, 5)}, false, "not significant"},
		{"noisy near zero", retx, Cell{Metric: "retransmits", A: []float64{0, 0, 3, 0, 0}, B: []float64{0, 4, 0, 0, 1}}, false, "A's mean 0.6 is not clearly away"},
		{"near zero, shown as the caller says", drop, Cell{Metric: "bitrate", A: []float64{12e9, 1e6, 24e9}, B: []float64{15e9, 14e9, 16e9},
			Show: func(v float64) string { return fmt.Sprintf("%.2f Gbit/s", v/1e9) }}, false, "A's mean 12.00 Gbit/s is not clearly away from 0"},
	} {
		vs, err := Check([]Rule{tc.rule}, []Cell{tc.cell})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || vs[0].Fail != tc.fail || Failed(vs) != tc.fail || !strings.Contains(vs[0].Why, tc.why) {
			t.Errorf("%s: %+v, want fail=%v and a reason containing %q", tc.name, vs, tc.fail, tc.why)
		}
	}
	if _, err := Check([]Rule{drop}, []Cell{{Metric: "rtt", A: base, B: base}}); err == nil {
		t.Error("a rule whose metric no cell has must be an error, not a silent pass")
	}
}

// TestCheckNoiseManyCells: two runs of the same distribution with many
// cells fail the gate in at most about 5% of runs (Bonferroni over the
// cells; at 95% per cell 20 cells failed it in about a third of runs),
// while one real 10% loss among them is still caught.
func TestCheckNoiseManyCells(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	draw := func(m float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = m * (1 + 0.05*r.NormFloat64())
		}
		return out
	}
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	const runs = 400
	failed, caught := 0, 0
	for range runs {
		var cells []Cell
		for range 20 {
			cells = append(cells, Cell{Metric: "bitrate", A: draw(100, 5), B: draw(100, 5)})
		}
		vs, _ := Check([]Rule{drop}, cells)
		if Failed(vs) {
			failed++
		}
		cells[0].A, cells[0].B = draw(100, 10), draw(80, 10)
		if vs, _ = Check([]Rule{drop}, cells); vs[0].Fail {
			caught++
		}
	}
	t.Logf("pure noise, 20 cells of 5 trials: failed %d of %d; a 20%% loss caught in %d", failed, runs, caught)
	if failed > runs*8/100 {
		t.Errorf("noise failed the gate in %d of %d runs, want about 5%% at most", failed, runs)
	}
	if caught < runs*9/10 {
		t.Errorf("a 20%% loss among 20 cells caught in %d of %d runs", caught, runs)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"bitrate < -5%", "x>+1%", "a<%", "<>", "m < 1e309%", "retransmits > +50", "m<-1e308", "m > 1e309", "m > -0", "m<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		if !metricName.MatchString(r.Metric) || math.IsNaN(r.Change) || math.IsInf(r.Change, 0) || !r.Absolute && (r.Change <= -1 || r.Change > 100) ||
			r.Absolute == strings.HasSuffix(strings.TrimSpace(s), "%") {
			t.Fatalf("%q parsed to an invalid rule %+v", s, r)
		}
	})
}

// TestCheckGaveUp: a cell B's runner gave up fails its rules whatever
// trials it left: one survivor at par or at -80% (which, one trial on a
// side, was "not judged" and passed), five good ones, or none; the
// reason says B gave it up and why.
func TestCheckGaveUp(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	base := around(10e9, 0.02, 5)
	const why = "trial 2 failed 3 attempts; last: iperf3: connection refused"
	for _, tc := range []struct {
		name string
		cell Cell
		want string
	}{
		{"one survivor at par", Cell{Metric: "bitrate", A: base, B: []float64{10e9}, GaveUp: why}, "B gave the cell up (" + why + "), 1 trial(s) counted before"},
		{"one survivor at -80%", Cell{Metric: "bitrate", A: base, B: []float64{2e9}, GaveUp: why}, "B gave the cell up"},
		{"five good trials", Cell{Metric: "bitrate", A: base, B: base, GaveUp: why}, "a broken cell fails however its trials compare"},
		{"none left", Cell{Metric: "bitrate", A: base, Missing: true, GaveUp: why}, "B gave the cell up (" + why + "): no trial of it counted there"},
	} {
		vs, err := Check([]Rule{drop}, []Cell{tc.cell})
		if err != nil || len(vs) != 1 || !vs[0].Fail || !strings.Contains(vs[0].Why, tc.want) {
			t.Errorf("%s: %+v %v, want a failure whose reason contains %q", tc.name, vs, err, tc.want)
		}
	}
}

// TestCheckNotMeasured: a cell whose counted trials in B have no value
// of the metric A has there fails (it passed as "not judged", while one
// value of five failed as too few to judge: less evidence, a better
// verdict), and so does a rule all of whose cells are so, rather than
// being no cell of the metric; a cell B gave up or did not finish fails
// as such, whatever its trials lack. It is not counted among the judged
// cells.
func TestCheckNotMeasured(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	base := around(10e9, 0.02, 5)
	unmeasured := Cell{Key: "rfs", Metric: "bitrate", A: base, NotMeasured: true}
	vs, err := Check([]Rule{drop}, []Cell{{Key: "baseline", Metric: "bitrate", A: base, B: base}, unmeasured})
	if err != nil || len(vs) != 2 || !vs[1].Fail || vs[1].Judged || vs[1].Outcome() != OutcomeFail ||
		!strings.Contains(vs[1].Why, "not measured in B (its trials of the cell have no value of bitrate, which A has there); a gate does not pass on no evidence") {
		t.Errorf("a cell B's trials lack the metric of: %+v %v, want it failed", vs, err)
	}
	if vs[0].Fail || vs[0].Level != 0.95 {
		t.Errorf("the measured cell: %+v, want it passed at 95%% (the only one judged)", vs[0])
	}
	if vs, err := Check([]Rule{drop}, []Cell{unmeasured}); err != nil || !Failed(vs) {
		t.Errorf("a rule whose every cell B's trials lack the metric of: %+v %v, want the gate failed", vs, err)
	}
	for _, c := range []struct {
		name string
		cell Cell
		want string
	}{
		{"unfinished", Cell{Metric: "bitrate", A: base, NotMeasured: true, Unfinished: true, PlannedB: "5"}, "B unfinished (n=0 of planned 5, its trials without a value of bitrate)"},
		{"given up", Cell{Metric: "bitrate", A: base, NotMeasured: true, GaveUp: "trial 3 failed 4 attempts"}, "B gave the cell up (trial 3 failed 4 attempts)"},
	} {
		if vs, err := Check([]Rule{drop}, []Cell{c.cell}); err != nil || len(vs) != 1 || !vs[0].Fail || !strings.Contains(vs[0].Why, c.want) {
			t.Errorf("%s and not measured: %+v %v, want it failed as %q", c.name, vs, err, c.want)
		}
	}
}

// TestCheckLevelCountsCells: the Bonferroni level counts the cells
// judged (each a cell and metric), not the rules times the cells: two
// rules of one metric read one interval, and a single cell judged by
// both is judged at 95% (it was 97.5%); two cells of two metrics count
// two.
func TestCheckLevelCountsCells(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	jump := Rule{Text: "bitrate > +50%", Metric: "bitrate", Change: 0.5}
	rtt := Rule{Text: "rtt > +10%", Metric: "rtt", Change: 0.1}
	base := around(100, 0.02, 5)
	cell := Cell{Key: "baseline", Metric: "bitrate", A: base, B: base}
	vs, err := Check([]Rule{drop, jump}, []Cell{cell})
	if err != nil || len(vs) != 2 || vs[0].Level != 0.95 || vs[1].Level != 0.95 {
		t.Errorf("two rules, one cell: %+v %v, want both at 95%%", vs, err)
	}
	vs, err = Check([]Rule{drop, jump, rtt}, []Cell{cell, {Key: "baseline", Metric: "rtt", A: base, B: base}})
	if err != nil || len(vs) != 3 || vs[0].Level != 0.975 || vs[2].Level != 0.975 {
		t.Errorf("two metrics of one cell: %+v %v, want 97.5%%", vs, err)
	}
}

// TestCheckUnfinished: a cell B ended before finishing fails whatever
// its trials say, as a cell B never reached does, and is not counted
// among the judged cells (the Bonferroni level of the others stays);
// before, two trials of a cell cut short passed on an interval that
// could not exclude 1.
func TestCheckUnfinished(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	base := around(10e9, 0.02, 5)
	cut := Cell{Key: "rfs", Metric: "bitrate", A: base, B: []float64{9.7e9, 10.4e9}, Unfinished: true, PlannedB: "5"}
	vs, err := Check([]Rule{drop}, []Cell{{Key: "baseline", Metric: "bitrate", A: base, B: base}, cut})
	if err != nil || len(vs) != 2 || !vs[1].Fail || vs[1].Judged || !strings.Contains(vs[1].Why, "B unfinished (n=2 of planned 5)") {
		t.Fatalf("%+v %v: want the unfinished cell failed, not judged", vs, err)
	}
	if vs[0].Fail || vs[0].Level != 0.95 {
		t.Errorf("the finished cell: %+v, want it passed at 95%% (the only one judged)", vs[0])
	}
	cut.Unfinished = false
	if vs, _ := Check([]Rule{drop}, []Cell{cut}); Failed(vs) {
		t.Errorf("the same trials of a finished B: %+v, want passed (the test's point)", vs)
	}
}

// TestRuleWarning: a rule that fails on an improvement of its metric
// (by stats.DirectionOf) says so, with the regression gate of the same
// size; one that fails on regressions only says nothing.
func TestRuleWarning(t *testing.T) {
	for in, want := range map[string]string{
		"bitrate < -5%": "",
		"bitrate < 0%":  "",
		"rtt_us > +10%": "",
		"rtt_us > 0%":   "",
		// Drops and CPU are better low: no sign-slip warning advising
		// 'qdisc_dropped < -10%' (stats.DirectionOf called them higher).
		"qdisc_dropped > +10%":          "",
		"node_cpu_percent_server > +5%": "",
		"bitrate < 5%":                  "rule 'bitrate < 5%' fails when bitrate rises by less than 5%, improvements included; for a regression gate write 'bitrate < -5%'",
		"bitrate > 5%":                  "rule 'bitrate > 5%' fails when bitrate rises by more than 5%, an improvement (bitrate is better higher); for a regression gate write 'bitrate < -5%'",
		"rtt_us < -10%":                 "rule 'rtt_us < -10%' fails when rtt_us falls by more than 10%, an improvement (rtt_us is better lower); for a regression gate write 'rtt_us > +10%'",
		"rtt_us > -10%":                 "rule 'rtt_us > -10%' fails when rtt_us falls by less than 10%, improvements included; for a regression gate write 'rtt_us > +10%'",
		"rtt_us < 2.5%":                 "rule 'rtt_us < 2.5%' fails when rtt_us rises by less than 2.5% or falls, an improvement (rtt_us is better lower); for a regression gate write 'rtt_us > +2.5%'",
		"bitrate > 0%":                  "rule 'bitrate > 0%' fails when bitrate rises, an improvement (bitrate is better higher); for a regression gate write 'bitrate < 0%'",
		"retransmits<5%":                "rule 'retransmits<5%' fails when retransmits rises by less than 5% or falls, an improvement (retransmits is better lower); for a regression gate write 'retransmits > +5%'",
	} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Warning(); got != want {
			t.Errorf("%q: warning\n  %q\nwant\n  %q", in, got, want)
		}
	}
}

// TestVerdictDigits: a change printed beside its threshold has the
// digits to tell them apart: -5.04% fails a -5% rule and read "change
// -5.0% ... beyond -5.0%", -4.96% passed reading "-5.0% ... within
// -5.0%"; bounds of an interval that excludes 1 never read 1.000.
func TestVerdictDigits(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	base := around(10, 0.0001, 10)
	for _, tc := range []struct {
		ratio float64
		fail  bool
		want  string
	}{
		{0.9496, true, "change -5.04% is significant"},
		{0.9496, true, "and beyond -5.00%"},
		{0.9504, false, "significant change -4.96% ("},
		{0.9504, false, "within the threshold -5.00%"},
		{0.90, true, "change -10.0% is significant"},
	} {
		vs, err := Check([]Rule{drop}, []Cell{{Metric: "bitrate", A: base, B: around(10*tc.ratio, 0.0001, 10)}})
		if err != nil || len(vs) != 1 || vs[0].Fail != tc.fail || !strings.Contains(vs[0].Why, tc.want) {
			t.Errorf("B = %v A: %+v %v, want fail=%v and %q", tc.ratio, vs, err, tc.fail, tc.want)
		}
	}
	for _, tc := range []struct {
		change, threshold float64
		c, th             string
	}{
		{-0.0504, -0.05, "-5.04%", "-5.00%"},
		{-0.05000001, -0.05, "-5.000001%", "-5.000000%"},
		{-0.05, -0.05, "-5.0%", "-5.0%"},
		{0.12, 0.10, "+12.0%", "+10.0%"},
		{math.Inf(1), 0.10, "+Inf%", "+10.0%"},
	} {
		if c, th := pctApart(tc.change, tc.threshold); c != tc.c || th != tc.th {
			t.Errorf("pctApart(%v, %v) = %s, %s; want %s, %s", tc.change, tc.threshold, c, th, tc.c, tc.th)
		}
	}
	for x, want := range map[float64]string{0.9999: "0.9999", 1.00004: "1.00004", 1: "1.000", 0.95: "0.950"} {
		if got := ratioText(x); got != want {
			t.Errorf("ratioText(%v) = %s, want %s", x, got, want)
		}
	}
}

// TestVerdictFields: a verdict carries what CSV and JSON report of it:
// its outcome in a word, the level, the change and the interval it was
// judged on (NaN where it has none).
func TestVerdictFields(t *testing.T) {
	drop := Rule{Text: "bitrate < -5%", Metric: "bitrate", Below: true, Change: -0.05}
	base := around(100, 0.02, 10)
	cells := []Cell{
		{Key: "slow", Metric: "bitrate", A: base, B: around(90, 0.02, 10)},
		{Key: "same", Metric: "bitrate", A: base, B: base},
		{Key: "lost", Metric: "bitrate", A: base, Missing: true, Absent: NotReached},
		{Key: "unmeasured", Metric: "bitrate", A: base, NotMeasured: true},
	}
	vs, err := Check([]Rule{drop}, cells)
	if err != nil || len(vs) != 4 {
		t.Fatal(vs, err)
	}
	for i, want := range []string{OutcomeFail, OutcomePass, OutcomeFail, OutcomeFail} {
		if got := vs[i].Outcome(); got != want {
			t.Errorf("%s: outcome %s, want %s", cells[i].Key, got, want)
		}
	}
	// Two judged cells: Bonferroni's 97.5%.
	slow := vs[0]
	if slow.Level != 0.975 || math.Abs(slow.Change+0.1) > 1e-9 || !(slow.Low < 0.9 && slow.High > 0.9 && slow.High < 1) || !math.IsNaN(slow.P) {
		t.Errorf("judged verdict: %+v", slow)
	}
	if lost := vs[2]; lost.Judged || lost.Level != 0 || !math.IsNaN(lost.Change) || !math.IsNaN(lost.Low) {
		t.Errorf("unjudged verdict: %+v", lost)
	}
}
