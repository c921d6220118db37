package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// runDir records a run directory of n trials per tuning whose bitrate is
// mean·(1 + sd·N(0,1)), as a real run writes it (study.yaml, samples).
func runDir(t *testing.T, rng *rand.Rand, n int, means map[string]float64, sd float64) string {
	t.Helper()
	trials := map[string][]map[string]float64{}
	for trial := 1; trial <= n; trial++ {
		for tuning, m := range means {
			trials[tuning] = append(trials[tuning], map[string]float64{results.MetricBitrate: m * (1 + sd*rng.NormFloat64())})
		}
	}
	return writeRun(t, trials)
}

func compareExit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"compare"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestCompareGate: a real 10% regression fails the gate (exit 1); two
// runs of the same distribution (noise) pass it (exit 0) in every one of
// 20 repetitions; bad rules are bad input (exit 2).
func TestCompareGate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	base := map[string]float64{"baseline": 10e9, "rfs": 12e9}
	a := runDir(t, rng, 10, base, 0.02)
	slow := runDir(t, rng, 10, map[string]float64{"baseline": 10e9, "rfs": 10.8e9}, 0.02)
	code, out, _ := compareExit(t, a, slow, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "**FAIL**") || !strings.Contains(out, "bridge/rfs/tcp/r=1") {
		t.Errorf("10%% regression: exit %d, want %d\n%s", code, ExitFailure, out)
	}
	for i := 0; i < 20; i++ {
		same := runDir(t, rng, 10, base, 0.02)
		if code, out, errs := compareExit(t, a, same, "--fail-if", "bitrate < -5%"); code != ExitOK {
			t.Fatalf("noise failed the gate (repetition %d): exit %d\n%s%s", i, code, out, errs)
		}
	}
	for _, bad := range []string{"bitrate < five", "nope < -5%"} {
		if code, _, errs := compareExit(t, a, slow, "--fail-if", bad); code != ExitBadInput || strings.Count(errs, "\n") != 1 {
			t.Errorf("--fail-if %q: exit %d, want %d with one line: %q", bad, code, ExitBadInput, errs)
		}
	}
	if code, _, _ := compareExit(t, a, slow, "--format", "xml"); code != ExitBadInput {
		t.Errorf("--format xml: exit %d", code)
	}
}

// A run compared with itself, by any path to it, is compared (a check of
// the gate), and the table says that it is one run; two runs do not.
func TestCompareSameRun(t *testing.T) {
	a := runDir(t, rand.New(rand.NewPCG(1, 2)), 3, map[string]float64{"baseline": 10e9}, 0.02)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	const note = "A and B are the same run directory"
	for _, b := range []string{a, a + "/.", link} {
		code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
		if code != ExitOK || !strings.Contains(out, note) || !strings.Contains(out, "| 1.000") {
			t.Errorf("compare %s %s: exit %d\n%s%s", a, b, code, out, errs)
		}
		if _, out, _ := compareExit(t, a, b, "--format", "json"); !strings.Contains(out, `"same_run": true`) {
			t.Errorf("json of %s %s: %s", a, b, out)
		}
	}
	other := runDir(t, rand.New(rand.NewPCG(1, 2)), 3, map[string]float64{"baseline": 10e9}, 0.02)
	if _, out, _ := compareExit(t, a, other); strings.Contains(out, note) {
		t.Errorf("two runs of the same numbers called one:\n%s", out)
	}
}

func TestCompareFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a := runDir(t, rng, 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, rng, 5, map[string]float64{"baseline": 8e9}, 0.02)
	code, out, _ := compareExit(t, a, b, "--format", "json", "--fail-if", "bitrate < -5%")
	var doc struct {
		Rows []struct {
			Cell        string   `json:"cell"`
			Ratio       *float64 `json:"ratio"`
			FailedRules []string `json:"failed_rules"`
		} `json:"rows"`
		Failed bool `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if code != ExitFailure || !doc.Failed || len(doc.Rows) != 1 || doc.Rows[0].Ratio == nil || len(doc.Rows[0].FailedRules) != 1 {
		t.Errorf("json: exit %d %+v", code, doc)
	}
	code, out, _ = compareExit(t, a, b, "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 2 || !strings.HasPrefix(lines[0], "cell,metric,n_a,") || !strings.HasPrefix(lines[1], "bridge/baseline/tcp/r=1,bitrate,5,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
}

// writeRun writes a run directory whose one cell (bridge/TUNING/tcp/r=1)
// has the given trials; a nil metrics map is a failed trial.
func writeRun(t *testing.T, trials map[string][]map[string]float64) string {
	t.Helper()
	return writeRunOn(t, "bridge", trials)
}

// writeRunOn is writeRun with the cell on datapath dp.
func writeRunOn(t *testing.T, dp string, trials map[string][]map[string]float64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The study the trials are of: its cells are the ones a gate holds
	// the runs to.
	var tunings []string
	trialCount := 1
	for tuning, ms := range trials {
		tunings, trialCount = append(tunings, tuning), max(trialCount, len(ms))
	}
	slices.Sort(tunings)
	studyYAML := fmt.Sprintf("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: gate}\nspec:\n  datapaths: [%s]\n  tunings: [%s]\n"+
		"  workloads: [{name: tcp, tool: iperf3}]\n  trials: %d\n  duration: 10s\n", dp, strings.Join(tunings, ", "), trialCount)
	if err := w.WriteStudy([]byte(studyYAML)); err != nil {
		t.Fatal(err)
	}
	var stops []results.Stop
	for tuning, ms := range trials {
		cell := results.Cell{Datapath: dp, Tuning: tuning, Workload: "tcp", Replicas: 1}
		counted := 0
		for i, m := range ms {
			s := results.Sample{Cell: cell, Trial: i + 1, Metrics: m}
			if m == nil {
				s.Metrics, s.Error, s.Discarded = map[string]float64{}, "iperf3: connection refused", "failed"
			} else {
				counted++
			}
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
		stops = append(stops, results.Stop{Cell: cell, Metric: results.MetricBitrate, N: counted, Status: "max"})
	}
	// A finished run's stops, as the runner writes them for a study
	// that compares tunings (study.RecordsStops): without them every
	// cell is one the run ended before finishing.
	if len(tunings) > 1 {
		if err := w.WriteStops(stops); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareGateEdges: a cell every trial of which failed in B fails the
// gate and shows in the table; a rise from zero (retransmits 0 -> ~1000)
// fails a "> +10%" rule; one trial a side fails (no interval, and a gate
// does not pass on no evidence); "" with a rule
// still means every metric; usage errors are bad input, not a failed gate.
func TestCompareGateEdges(t *testing.T) {
	bit := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, results.MetricRetransmits: 0}
	}
	a := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {bit(12e9), bit(12.1e9), bit(11.9e9)}})
	b := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {nil, nil, nil}})
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "bridge/rfs/tcp/r=1") || !strings.Contains(out, "no value in B") {
		t.Errorf("rfs failed in every trial of B: exit %d, want %d and the cell listed\n%s%s", code, ExitFailure, out, errs)
	}
	// Runs of one datapath each match whatever their names: a B whose
	// every trial failed is still such a run (its failed attempts name
	// its datapath), not one with no cell of the rule's metric (exit 2).
	other := writeRunOn(t, "flannel-vxlan", map[string][]map[string]float64{"baseline": {nil, nil, nil}})
	code, out, errs = compareExit(t, a, other, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, `bridge\|flannel-vxlan/baseline/tcp/r=1`) || !strings.Contains(out, "no value in B") {
		t.Errorf("B on another datapath failed every trial: exit %d, want %d and the cell listed\n%s%s", code, ExitFailure, out, errs)
	}
	retx := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: 10e9, results.MetricRetransmits: v}
	}
	zero := writeRun(t, map[string][]map[string]float64{"baseline": {retx(0), retx(0), retx(0), retx(0), retx(0)}})
	many := writeRun(t, map[string][]map[string]float64{"baseline": {retx(1000), retx(1100), retx(900), retx(1050), retx(980)}})
	if code, out, errs := compareExit(t, zero, many, "--metric", "", "--fail-if", "retransmits > +10%"); code != ExitFailure {
		t.Errorf("retransmits 0 -> ~1000: exit %d, want %d\n%s%s", code, ExitFailure, out, errs)
	}
	if code, out, errs := compareExit(t, zero, zero, "--metric", "bitrate", "--metric", "", "--fail-if", "retransmits > +10%"); code != ExitOK {
		t.Errorf("\"\" among --metric with a rule: exit %d, want %d\n%s%s", code, ExitOK, out, errs)
	}
	one := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9)}})
	half := writeRun(t, map[string][]map[string]float64{"baseline": {bit(5e9)}})
	if code, out, _ := compareExit(t, one, half, "--fail-if", "bitrate < -5%"); code != ExitFailure || !strings.Contains(out, "not enough trials to judge: 1 in A, 1 in B") {
		t.Errorf("one trial a side: exit %d, want %d (no interval: not enough trials to judge)\n%s", code, ExitFailure, out)
	}
	for _, args := range [][]string{{a}, {a, b, b}} {
		if code, _, _ := compareExit(t, args...); code != ExitBadInput {
			t.Errorf("compare %v: exit %d, want %d (usage)", args, code, ExitBadInput)
		}
	}
	// A metric neither run has is a slip, not an empty table (exit 0) or
	// a gate on nothing: bad input, with the run's metric it most likely
	// means. One that a run lacks but the other has stays the table's.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metric", "bitrat"}, `--metric "bitrat": neither run has this metric (did you mean "bitrate"? they have: bitrate, retransmits)`},
		{[]string{"--fail-if", "retransmit > +10%"}, `--fail-if "retransmit > +10%": neither run has metric "retransmit" (did you mean "retransmits"?`},
		{[]string{"--metric", "jitter_ms"}, `--metric "jitter_ms": neither run has this metric (they have: bitrate, retransmits)`},
	} {
		if code, _, errs := compareExit(t, append([]string{a, b}, c.args...)...); code != ExitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("compare %q: exit %d, %s; want %d and %q", c.args, code, errs, ExitBadInput, c.want)
		}
	}
	var o, e bytes.Buffer
	if code := Main(context.Background(), []string{"frobnicate"}, &o, &e); code != ExitBadInput {
		t.Errorf("unknown command: exit %d, want %d", code, ExitBadInput)
	}
	if code := Main(context.Background(), []string{"report", filepath.Join(t.TempDir(), "nope")}, &o, &e); code != ExitBadInput {
		t.Errorf("report of no run directory: exit %d, want %d", code, ExitBadInput)
	}
}

// TestCompareDefaultHeadline: without --metric every headline metric a
// cell has is compared (bitrate and transactions here), not the others
// (retransmits); --metric narrows it.
func TestCompareDefaultHeadline(t *testing.T) {
	trial := func(b float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: b, "transactions_per_s": b / 1e6, "retransmits": 3}
	}
	a := writeRun(t, map[string][]map[string]float64{"baseline": {trial(10e9), trial(10.1e9), trial(9.9e9)}})
	b := writeRun(t, map[string][]map[string]float64{"baseline": {trial(9e9), trial(9.1e9), trial(8.9e9)}})
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"bitrate", "transactions_per_s"}},
		{[]string{"--metric", "bitrate"}, []string{"bitrate"}},
		{[]string{"--metric", ""}, []string{"bitrate", "retransmits", "transactions_per_s"}},
	} {
		code, out, errs := compareExit(t, append([]string{a, b, "--format", "csv"}, c.args...)...)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			got = append(got, strings.Split(l, ",")[1])
		}
		if code != ExitOK || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("compare %v: exit %d, metrics %v, want %v\n%s%s", c.args, code, got, c.want, out, errs)
		}
	}
}

// A run that ended before its cells were done is compared on what it
// has, and the page and the JSON say that its numbers are partial.
func TestCompareUnfinished(t *testing.T) {
	const studyYAML = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: gate}\nspec:\n  datapaths: [bridge]\n" +
		"  tunings: [baseline, rfs]\n  workloads: [{name: tcp, tool: iperf3}]\n  trials: {min: 3, max: 10}\n  duration: 3s\n"
	trials := map[string][]map[string]float64{
		"baseline": {{results.MetricBitrate: 10e9}, {results.MetricBitrate: 10.1e9}, {results.MetricBitrate: 9.9e9}},
		"rfs":      {{results.MetricBitrate: 12e9}, {results.MetricBitrate: 12.1e9}, {results.MetricBitrate: 11.9e9}},
	}
	a, b := writeRun(t, trials), writeRun(t, trials)
	for _, dir := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(dir, results.StudyFile), []byte(studyYAML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stops []results.Stop
	for _, tn := range []string{"baseline", "rfs"} {
		stops = append(stops, results.Stop{Cell: results.Cell{Datapath: "bridge", Tuning: tn, Workload: "tcp", Replicas: 1}, Metric: results.MetricBitrate, N: 3, Status: "max"})
	}
	js, _ := json.Marshal(stops)
	if err := os.WriteFile(filepath.Join(a, results.StopsFile), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(b, results.StopsFile)); err != nil { // B ended in its first block
		t.Fatal(err)
	}
	code, out, errs := compareExit(t, a, b)
	if code != ExitOK || !strings.Contains(out, "B did not finish: 2 of its 2 cells were not done when it ended") ||
		!strings.Contains(out, "cnibench run --resume "+b+")") || strings.Contains(out, "A did not finish") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = compareExit(t, a, b, "--format", "json")
	var doc struct {
		A int `json:"unfinished_a"`
		B int `json:"unfinished_b"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || doc.A != 0 || doc.B != 2 {
		t.Errorf("JSON: exit %d, %+v, %v", code, doc, err)
	}
}
