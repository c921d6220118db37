package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// reachStudy is a fixed design of one datapath and one tuning at two
// replica counts: it records no stops.
const reachStudy = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: reach}\nspec:\n  datapaths: [bridge]\n" +
	"  tunings: [baseline]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1, 4]\n  trials: 5\n  duration: 10s\n"

// writeReplicas writes a run of reachStudy whose cell at each replica
// count has the given bitrates, and env.json with origin.
func writeReplicas(t *testing.T, trials map[int][]float64, origin []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte(reachStudy)); err != nil {
		t.Fatal(err)
	}
	for reps, vs := range trials {
		for i, v := range vs {
			s := results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: reps}, Trial: i + 1,
				Metrics: map[string]float64{results.MetricBitrate: v}}
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if origin != nil {
		if err := w.WriteEnv(results.Env{Tool: "cnibench", Engine: "kube", Origin: &results.Origin{Command: origin}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCompareGateCellNotReached: A has r=1 and r=4; B, a run of the
// same study cut short (a CI timeout), only r=1. Its fixed design
// records no stops. The gate passed (exit 0) and said nothing; now r=4
// fails it as "B did not reach it", the header says B did not finish
// with the command that continues it (a kube run's with its engine
// flags), and a partly run cell of one trial at -50% fails as "B
// unfinished (n=1 of planned 5)" instead of passing as "not judged".
func TestCompareGateCellNotReached(t *testing.T) {
	five := []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9}
	a := writeReplicas(t, map[int][]float64{1: five, 4: five}, nil)
	origin := []string{"cnibench", "run", "reach", "--engine", "kube", "--context", "ci", "--server-node", "w1", "--set", "trials=5"}
	b := writeReplicas(t, map[int][]float64{1: five}, origin)
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "| bitrate < -5% | bridge/baseline/tcp/r=4 | **FAIL** | B did not reach it") ||
		!strings.Contains(out, "B did not finish: 1 of its 2 cells were not done") ||
		!strings.Contains(out, "cnibench run --resume "+b+" --engine kube --context ci --server-node w1)") {
		t.Errorf("r=4 absent from B: exit %d, want %d, r=4 failed as not reached, B unfinished\n%s%s", code, ExitFailure, out, errs)
	}
	half := writeReplicas(t, map[int][]float64{1: five, 4: {5e9}}, nil)
	code, out, errs = compareExit(t, a, half, "--fail-if", "bitrate < -5%", "--format", "json")
	var doc struct {
		Failed   bool `json:"failed"`
		Verdicts []struct {
			Cell    string `json:"cell"`
			Verdict string `json:"verdict"`
			Why     string `json:"why"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailure || !doc.Failed {
		t.Fatalf("one trial of r=4 at -50%%: exit %d, %v\n%s%s", code, err, out, errs)
	}
	for _, v := range doc.Verdicts {
		if v.Cell == "bridge/baseline/tcp/r=4" && (v.Verdict != "fail" || !strings.Contains(v.Why, "B unfinished (n=1 of planned 5)")) {
			t.Errorf("r=4: %+v", v)
		}
	}
}

// TestResumeCommand: the command that continues a run keeps the engine
// and the kube flags of the command that started it, and nothing else
// (--resume refuses --set, --quick and a study).
func TestResumeCommand(t *testing.T) {
	for _, c := range []struct {
		origin *results.Origin
		want   string
	}{
		{nil, "cnibench run --resume out/r"},
		{&results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--quick"}}, "cnibench run --resume out/r"},
		{&results.Origin{Command: []string{"cnibench", "run", "/s.yaml", "--engine", "kube", "--kubeconfig", "/k/config", "--set", "trials=3",
			"--namespace", "bench", "--client-node", "role=c", "--pod-timeout", "5m0s", "--budget", "1h0m0s"}},
			"cnibench run --resume out/r --engine kube --client-node role=c --kubeconfig /k/config --namespace bench --pod-timeout 5m0s"},
	} {
		if got := strings.Join(resumeCommand("out/r", c.origin), " "); got != c.want {
			t.Errorf("origin %v: %s, want %s", c.origin, got, c.want)
		}
	}
	// The hint a failed run prints reads env.json's origin: a kube run's
	// said "cnibench run --resume DIR", which resumed it as a local run.
	dir := writeReplicas(t, map[int][]float64{1: {10e9}}, []string{"cnibench", "run", "reach", "--engine", "kube", "--context", "ci"})
	if got, want := resumeHint(dir), "; continue it with: cnibench run --resume "+dir+" --engine kube --context ci"; got != want {
		t.Errorf("resume hint %q, want %q", got, want)
	}
}

// TestCompareGateBUnfinished: B, a run of the same study cut short at
// two trials of each cell's five (a CI timeout), has intervals too wide
// to exclude 1; the gate passed it (exit 0, with the header's "B did not
// finish" only), while it failed the cells B never reached. Now each of
// its cells fails as "B unfinished (n=2 of planned 5)"; the comparison
// without a rule still shows it, exit 0. An adaptive B cut short in its
// first block names its range.
func TestCompareGateBUnfinished(t *testing.T) {
	five := []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9}
	a := writeReplicas(t, map[int][]float64{1: five, 4: five}, nil)
	b := writeReplicas(t, map[int][]float64{1: {9.7e9, 10.4e9}, 4: {10.3e9, 9.6e9}}, nil)
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	for _, reps := range []string{"1", "4"} {
		want := "| bitrate < -5% | bridge/baseline/tcp/r=" + reps + " | **FAIL** | B unfinished (n=2 of planned 5)"
		if code != ExitFailure || !strings.Contains(out, want) {
			t.Errorf("B cut at 2 of 5 trials: exit %d, want %d and %q\n%s%s", code, ExitFailure, want, out, errs)
		}
	}
	if !strings.Contains(out, "; B unfinished (n=2 of planned 5) |") {
		t.Errorf("the table's B column does not say it:\n%s", out)
	}
	if code, out, errs := compareExit(t, a, b); code != ExitOK {
		t.Errorf("without --fail-if: exit %d\n%s%s", code, out, errs)
	}
	// A finished B of the same numbers passes.
	if code, out, errs := compareExit(t, a, writeReplicas(t, map[int][]float64{1: five, 4: five}, nil), "--fail-if", "bitrate < -5%"); code != ExitOK {
		t.Errorf("finished B: exit %d\n%s%s", code, out, errs)
	}
	adaptive := strings.Replace(reachStudy, "trials: 5", "trials: {min: 3, max: 10}", 1)
	if err := os.WriteFile(filepath.Join(b, results.StudyFile), []byte(adaptive), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = compareExit(t, a, b, "--fail-if", "bitrate < -5%")
	if code != ExitFailure || !strings.Contains(out, "| **FAIL** | B unfinished (n=2 of planned 3 to 10)") {
		t.Errorf("adaptive B without stops: exit %d\n%s%s", code, out, errs)
	}
}

// TestCompareRowsSayUnfinished: A, the baseline, was cut at two trials
// of r=4's five, B at two of r=1's. The JSON said so only in the
// header's counts and in B's verdict's words, so a script reading rows
// could not tell which cell of which run was partial; each row says it
// now, from each run's own study (unfinished_in_a, unfinished_in_b,
// planned_a, planned_b). A's partial cell is still judged, B's fails.
func TestCompareRowsSayUnfinished(t *testing.T) {
	five := []float64{10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9}
	a := writeReplicas(t, map[int][]float64{1: five, 4: {10e9, 10.1e9}}, nil)
	b := writeReplicas(t, map[int][]float64{1: {9.9e9, 10e9}, 4: five}, nil)
	code, out, errs := compareExit(t, a, b, "--fail-if", "bitrate < -5%", "--format", "json")
	var doc struct {
		Rows []struct {
			Cell          string `json:"cell"`
			UnfinishedInA bool   `json:"unfinished_in_a"`
			UnfinishedInB bool   `json:"unfinished_in_b"`
			PlannedA      string `json:"planned_a"`
			PlannedB      string `json:"planned_b"`
			Verdict       string `json:"verdict"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitFailure || len(doc.Rows) != 2 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errs)
	}
	if doc.Rows[0].Cell != "bridge/baseline/tcp/r=1" {
		// writeReplicas writes the replica counts in any order, and rows
		// come in A's.
		doc.Rows[0], doc.Rows[1] = doc.Rows[1], doc.Rows[0]
	}
	if r := doc.Rows[0]; r.Cell != "bridge/baseline/tcp/r=1" || r.UnfinishedInA || !r.UnfinishedInB || r.PlannedA != "" || r.PlannedB != "5" ||
		r.Verdict != "fail" {
		t.Errorf("r=1, B unfinished: %+v", r)
	}
	if r := doc.Rows[1]; r.Cell != "bridge/baseline/tcp/r=4" || !r.UnfinishedInA || r.UnfinishedInB || r.PlannedA != "5" || r.PlannedB != "" ||
		r.Verdict != "pass" {
		t.Errorf("r=4, A unfinished: %+v", r)
	}
	if _, out, _ := compareExit(t, a, b); !strings.Contains(out, "; A unfinished (n=2 of planned 5) |") {
		t.Errorf("the table's A column does not say it:\n%s", out)
	}
}
