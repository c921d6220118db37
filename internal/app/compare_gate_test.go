package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
)

// gateStudy is the study.yaml of the recorded runs below.
const gateStudy = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: gate}\nspec:\n  datapaths: [bridge]\n" +
	"  tunings: [baseline]\n  workloads: [{name: tcp, tool: iperf3}]\n  trials: 5\n  duration: 10s\n"

// recorded is one attempt of a recorded run, at bridge/baseline/tcp/r=1:
// a bitrate, or 0 for a failed attempt.
type recorded struct {
	trial, attempt int
	bitrate        float64
}

// writeAttempts writes a run directory of the given attempts, its study
// and, unless nil, its stops.json, as the runner writes them.
func writeAttempts(t *testing.T, studyYAML string, attempts []recorded, stops []results.Stop) string {
	t.Helper()
	cell := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	var samples []results.Sample
	for _, a := range attempts {
		s := results.Sample{Cell: cell, Trial: a.trial, Attempt: a.attempt, Metrics: map[string]float64{results.MetricBitrate: a.bitrate}}
		if a.bitrate == 0 {
			s.Metrics, s.Error, s.Discarded = map[string]float64{}, "iperf3: connection refused", "failed"
		}
		samples = append(samples, s)
	}
	return writeRunDir(t, studyYAML, samples, stops)
}

// writeRunDir writes a run directory as the runner does: its study, its
// samples and, unless nil, its stops.json.
func writeRunDir(t *testing.T, studyYAML string, samples []results.Sample, stops []results.Stop) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte(studyYAML)); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if err := w.AppendSample(s); err != nil {
			t.Fatal(err)
		}
	}
	if stops != nil {
		if err := w.WriteStops(stops); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed+1)) }

// TestCompareGateGaveUp: B's runner gave the cell up at trial 2 (three
// failed attempts) after a counted trial 1. Whether that trial is at par
// or at -80%, and whether stops.json says so or only the attempts do (a
// fixed design), the gate fails (it passed, "not judged": one trial was
// too few to judge), saying B gave the cell up and why; with no trial
// left it fails too, as before.
func TestCompareGateGaveUp(t *testing.T) {
	var fine []recorded
	for i, v := range []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9} {
		fine = append(fine, recorded{i + 1, 1, v})
	}
	a := writeAttempts(t, gateStudy, fine, nil)
	failed := []recorded{{2, 1, 0}, {2, 2, 0}, {2, 3, 0}}
	const why = "trial 2 failed 3 attempts; last: iperf3: connection refused"
	stop := []results.Stop{{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}, Metric: results.MetricBitrate,
		Status: "failed", N: 2, Valid: 1, Failed: why}}
	for _, c := range []struct {
		name     string
		attempts []recorded
		stops    []results.Stop
		want     string
	}{
		{"survivor at par, stops.json", append([]recorded{{1, 1, 10e9}}, failed...), stop, "B gave the cell up (" + why + "), 1 trial(s) counted before"},
		{"survivor at -80%, stops.json", append([]recorded{{1, 1, 2e9}}, failed...), stop, "B gave the cell up (" + why + ")"},
		{"survivor at par, attempts only", append([]recorded{{1, 1, 10e9}}, failed...), nil, "B gave the cell up (" + why + ")"},
		{"nothing left", []recorded{{1, 1, 0}, {1, 2, 0}, {1, 3, 0}}, nil, "B gave the cell up (trial 1 failed 3 attempts"},
	} {
		b := writeAttempts(t, gateStudy, c.attempts, c.stops)
		code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
		if code != ExitFailure || !strings.Contains(out, c.want) || !strings.Contains(out, "**FAIL**") {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", c.name, code, ExitFailure, c.want, out, errs)
		}
	}
}

// TestCompareGateNotMeasured: a cell whose counted trials in B lack the
// metric A has there fails the gate, as "not measured in B" (it passed
// as "not judged", while B's value in one trial of five failed as too
// few to judge), whatever failed attempts it also has (it is not
// "missing"); a cell B ended before finishing fails as unfinished,
// whatever its trials lack. A metric no counted trial of B has is bad
// input, whatever B's failed attempts.
func TestCompareGateNotMeasured(t *testing.T) {
	bit := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, results.MetricRetransmits: 1}
	}
	retx := map[string]float64{results.MetricRetransmits: 1}
	a := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {bit(12e9), bit(12.1e9), bit(11.9e9)}})
	b := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {retx, nil, retx, retx}})
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	const why = "not measured in B (its trials of the cell have no value of bitrate, which A has there); a gate does not pass on no evidence"
	if code != ExitFailure || !strings.Contains(out, "not measured in B") || strings.Contains(out, "missing (") ||
		!strings.Contains(out, "| bitrate < -5% | bridge/rfs/tcp/r=1 | **FAIL** | "+why+" |") {
		t.Errorf("rfs counted in B without bitrate, one failed attempt: exit %d, want %d and \"not measured in B\" failed\n%s%s", code, ExitFailure, out, errs)
	}
	// Less evidence is no better verdict: bitrate in one of B's trials
	// of the cell fails (too few to judge), and in none fails too.
	one := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {bit(12e9), retx, retx}})
	if code, out, errs := compareExit(t, a, one, "--fail-if", "bitrate < -5%"); code != ExitFailure || !strings.Contains(out, "not enough trials to judge: 3 in A, 1 in B") {
		t.Errorf("bitrate in 1 of B's 3 trials of rfs: exit %d, want %d\n%s%s", code, ExitFailure, out, errs)
	}
	// B ended within rfs (its stop not written), after two trials
	// without bitrate: unfinished, which fails whatever the trials hold.
	two := strings.Replace(gateStudy, "tunings: [baseline]", "tunings: [baseline, rfs]", 1)
	base := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	rfs := base
	rfs.Tuning = "rfs"
	var samples []results.Sample
	for i, v := range []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9} {
		samples = append(samples, results.Sample{Cell: base, Trial: i + 1, Metrics: bit(v)})
	}
	samples = append(samples, results.Sample{Cell: rfs, Trial: 1, Metrics: retx}, results.Sample{Cell: rfs, Trial: 2, Metrics: retx})
	cut := writeRunDir(t, two, samples, []results.Stop{{Cell: base, Metric: results.MetricBitrate, N: 5, Valid: 5, Status: "max"}})
	code, out, errs = compareExit(t, a, cut, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "| bitrate < -5% | bridge/rfs/tcp/r=1 | **FAIL** | B unfinished (n=0 of planned 5, its trials without a value of bitrate)") ||
		!strings.Contains(out, "| not measured in B (its trials of the cell have no value of bitrate); B unfinished (planned 5) |") {
		t.Errorf("B cut within rfs, its two trials without bitrate: exit %d, want %d and the cell failed as unfinished\n%s%s", code, ExitFailure, out, errs)
	}
}

// TestCompareGateMetricOneRunLacks: a rule's metric that B measured in
// no cell (its collector broken everywhere) fails every cell A has it
// in as not measured in B, and the table (JSON here) is still written,
// with the other rule's verdicts: it was bad input (exit 2, nothing on
// stdout), which hid a real bitrate regression judged by the other
// rule. The other way round, a metric A measured nowhere fails B's
// cells of it (B's values have no baseline); a metric neither run has
// stays bad input.
func TestCompareGateMetricOneRunLacks(t *testing.T) {
	both := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, "cpp_total_ns": 500}
	}
	bit := func(v float64) map[string]float64 { return map[string]float64{results.MetricBitrate: v} }
	a := writeRun(t, map[string][]map[string]float64{"baseline": {both(10e9), both(10.1e9), both(9.9e9)}, "rfs": {both(12e9), both(12.1e9), both(11.9e9)}})
	b := writeRun(t, map[string][]map[string]float64{"baseline": {bit(10e9), bit(10.1e9), bit(9.9e9)}, "rfs": {bit(6e9), bit(6.1e9), bit(5.9e9)}})
	code, out, errs := compareExit(t, a, b, "--fail-if", "cpp_total_ns > +10%", "--fail-if", "bitrate < -5%", "--format", "json")
	var doc struct {
		Rows []struct {
			Cell, Metric, Verdict string
			NotMeasuredInB        bool `json:"not_measured_in_b"`
		} `json:"rows"`
		Verdicts []struct{ Rule, Cell, Why string }
		Failed   bool
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailure || !doc.Failed || len(doc.Rows) != 4 {
		t.Fatalf("B has no cpp_total_ns in any cell: exit %d (%v), want %d and the JSON of 4 rows\n%s%s", code, err, ExitFailure, out, errs)
	}
	var failed []string
	for _, r := range doc.Rows {
		if r.Metric == "cpp_total_ns" && (!r.NotMeasuredInB || r.Verdict != "fail") {
			t.Errorf("row %+v: want not measured in B, failed", r)
		}
		if r.Verdict == "fail" {
			failed = append(failed, r.Cell+" "+r.Metric)
		}
	}
	// writeRun writes the cells in no set order, which the rows follow.
	slices.Sort(failed)
	if want := "bridge/baseline/tcp/r=1 cpp_total_ns, bridge/rfs/tcp/r=1 bitrate, bridge/rfs/tcp/r=1 cpp_total_ns"; strings.Join(failed, ", ") != want {
		t.Errorf("failed rows %q, want %q (rfs's halved bitrate among them)", strings.Join(failed, ", "), want)
	}
	// The other way round: B's cpp_total_ns has no baseline in A.
	code, out, errs = compareExit(t, b, a, "--fail-if", "cpp_total_ns > +10%")
	if code != ExitFailure || !strings.Contains(out, "| **FAIL** | not measured in A (its trials of the cell have no value of cpp_total_ns, which B has there)") {
		t.Errorf("A has no cpp_total_ns in any cell: exit %d, want %d\n%s%s", code, ExitFailure, out, errs)
	}
	code, _, errs = compareExit(t, b, b, "--fail-if", "cpp_total_ns > +10%")
	if code != ExitBadInput || !strings.Contains(errs, `neither run has metric "cpp_total_ns"`) {
		t.Errorf("neither run has cpp_total_ns: exit %d, want %d\n%s", code, ExitBadInput, errs)
	}
}

// TestCompareStudyDiffers: runs of different studies (another name, a
// longer duration, another tcp length) are compared, and every format
// says how they differ: the page and the JSON's differ, and csv's and
// json's stderr; trial counts are no difference.
func TestCompareStudyDiffers(t *testing.T) {
	a := runDir(t, randFor(1), 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, randFor(2), 9, map[string]float64{"baseline": 10e9}, 0.02) // its study's 9 trials
	if err := os.WriteFile(filepath.Join(a, results.StudyFile), []byte(gateStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer("name: gate", "name: gate-pr", "duration: 10s", "duration: 30s", "trials: 5", "trials: 9",
		"{name: tcp, tool: iperf3}", "{name: tcp, tool: iperf3, length: 64K}").Replace(gateStudy)
	if err := os.WriteFile(filepath.Join(b, results.StudyFile), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	const differ = "study gate / gate-pr; study duration 10s / 30s; study workload tcp length (none) / 64K"
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitOK || !strings.Contains(out, "The runs differ in: "+differ+" (besides") || strings.Contains(out, "study trials") {
		t.Errorf("md: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = compareExit(t, a, b, "--format", "csv")
	if code != ExitOK || !strings.Contains(errs, "warning: The runs differ in: "+differ) {
		t.Errorf("csv: exit %d, stderr %q", code, errs)
	}
	code, out, errs = compareExit(t, a, b, "--format", "json")
	var doc struct {
		Differ []string `json:"differ"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitOK || strings.Join(doc.Differ, "; ") != differ ||
		!strings.Contains(errs, "warning: The runs differ in: ") {
		t.Errorf("json: exit %d, %v %+v, stderr %q", code, err, doc, errs)
	}
}

// TestCompareWarnsFailIfOnImprovement: a rule that fails on an
// improvement is accepted (a gate may require one) with one warning line
// that shows the regression gate; a regression gate has none.
func TestCompareWarnsFailIfOnImprovement(t *testing.T) {
	a := runDir(t, randFor(3), 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, randFor(4), 5, map[string]float64{"baseline": 10.2e9}, 0.02)
	// +2% is significant and below +5%: the rule fails on it, as written.
	code, _, errs := compareExit(t, a, b, "--fail-if", "bitrate < 5%")
	const want = "warning: rule 'bitrate < 5%' fails when bitrate rises by less than 5%, improvements included; for a regression gate write 'bitrate < -5%'\n"
	if !strings.HasPrefix(errs, want) || strings.Count(errs, "warning:") != 1 || code != ExitFailure {
		t.Errorf("exit %d, stderr %q, want %d and %q", code, errs, ExitFailure, want)
	}
	if code, _, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%"); code != ExitOK || errs != "" {
		t.Errorf("a regression gate: exit %d, stderr %q", code, errs)
	}
}

// TestCompareCSVWarnings: the page's words on the runs (a run that did
// not finish, one directory twice) reach a CI log with csv on stderr,
// and stdout stays the CSV.
func TestCompareCSVWarnings(t *testing.T) {
	adaptive := strings.Replace(gateStudy, "trials: 5", "trials: {min: 3, max: 5}", 1)
	a := writeAttempts(t, adaptive, []recorded{{1, 1, 10e9}, {2, 1, 10.1e9}, {3, 1, 9.9e9}}, nil)
	code, out, errs := compareExit(t, a, a, "--format", "csv")
	if code != ExitOK || !strings.HasPrefix(out, "cell,metric,") || !strings.Contains(errs, "warning: A did not finish: 1 of its 1 cells") ||
		!strings.Contains(errs, "warning: B did not finish") || !strings.Contains(errs, "warning: A and B are the same run directory") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// failingWriter fails every write, as a closed pipe or a full disk do.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestCompareOutputError: a table that cannot be written exits
// ExitOutput, not 1 (a failed gate) whatever the gate said, and the one
// line names what was written where, and the gate's verdict.
func TestCompareOutputError(t *testing.T) {
	a := runDir(t, randFor(5), 5, map[string]float64{"baseline": 10e9}, 0.02)
	slow := runDir(t, randFor(6), 5, map[string]float64{"baseline": 8e9}, 0.02)
	for _, c := range []struct {
		format, verdict string
	}{{"md", "(the regression gate failed)"}, {"csv", "(the regression gate failed)"}, {"json", "(the regression gate failed)"}} {
		var errb strings.Builder
		code := Main(context.Background(), []string{"compare", a, slow, "--format", c.format, "--fail-if", "bitrate < -5%"}, failingWriter{}, &errb)
		if code != ExitOutput || !strings.Contains(errb.String(), "writing the comparison of "+a+" and "+slow+" (--format "+c.format+") to standard output") ||
			!strings.Contains(errb.String(), "no space left on device") || !strings.Contains(errb.String(), c.verdict) {
			t.Errorf("%s: exit %d, want %d\n%s", c.format, code, ExitOutput, errb.String())
		}
	}
}

// TestCompareSaysWhatLoadingTolerated: a run whose last sample line a
// crash cut (dropped by results.Load) is compared on the trials it has,
// and the page (md) or stderr (csv) says so, as its report does; the
// comparison said nothing of it.
func TestCompareSaysWhatLoadingTolerated(t *testing.T) {
	a := runDir(t, randFor(3), 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, randFor(4), 5, map[string]float64{"baseline": 10e9}, 0.02)
	f, err := os.OpenFile(filepath.Join(b, results.SamplesFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"cell":{"datapath":"bri`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	const want = "B: " + "%s:6: dropped a truncated last line"
	line := fmt.Sprintf(want, filepath.Join(b, results.SamplesFile))
	if code, out, errs := compareExit(t, a, b); code != ExitOK || !strings.Contains(out, line) {
		t.Errorf("md: exit %d, want %d and %q on the page\n%s%s", code, ExitOK, line, out, errs)
	}
	if code, out, errs := compareExit(t, a, b, "--format", "csv"); code != ExitOK || !strings.Contains(errs, "warning: "+line) || strings.Contains(out, "truncated") {
		t.Errorf("csv: exit %d, want %d and %q on stderr only\nstdout %s\nstderr %s", code, ExitOK, line, out, errs)
	}
}

// A run still being written (its directory's lock held, as a run and a
// resume hold it) is refused, not gated as one that ended short; a gate
// refuses a run whose study this build cannot read, since the cells it
// never reached could not fail. Without rules such a run is compared.
func TestCompareRefusesWhatItCannotJudge(t *testing.T) {
	a := runDir(t, randFor(5), 5, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, randFor(6), 5, map[string]float64{"baseline": 10e9}, 0.02)
	release, err := runner.LockRunDir(b)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := compareExit(t, a, b)
	release()
	if code != ExitBadInput || !strings.Contains(errs, "run B: "+b) || !strings.Contains(errs, runner.ErrRunDirBusy.Error()) {
		t.Errorf("B still written: exit %d, want %d naming it\n%s", code, ExitBadInput, errs)
	}
	if err := os.WriteFile(filepath.Join(b, results.StudyFile), []byte(gateStudy+"  newField: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%"); code != ExitBadInput || !strings.Contains(errs, "--fail-if needs each run's study") {
		t.Errorf("B's study unreadable, with a gate: exit %d, want %d\n%s", code, ExitBadInput, errs)
	}
	if code, _, errs := compareExit(t, a, b); code != ExitOK {
		t.Errorf("B's study unreadable, no gate: exit %d, want %d\n%s", code, ExitOK, errs)
	}
}

// Two runs with no cell in common are bad input saying so, not "no cell
// of both runs has metric", which both have, each in its own cells.
func TestCompareNoCommonCell(t *testing.T) {
	a := runDir(t, randFor(7), 3, map[string]float64{"baseline": 10e9}, 0.02)
	b := runDir(t, randFor(8), 3, map[string]float64{"rfs": 10e9}, 0.02)
	code, _, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitBadInput || !strings.Contains(errs, "the runs have no cell in common") {
		t.Errorf("no common cell: exit %d, want %d saying so\n%s", code, ExitBadInput, errs)
	}
}
