package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
)

// `cnibench report DIR` ends as the run did: its decisions and the
// command that would decide the undecided cells, built from the command
// the run recorded and narrowed to the tunings they need, a command the
// study takes.
func TestReportPrintsDecisions(t *testing.T) {
	dir := writeRun(t, map[string][]map[string]float64{
		"baseline": {{results.MetricBitrate: 10e9}, {results.MetricBitrate: 10.2e9}, {results.MetricBitrate: 9.9e9}},
		"rfs":      {{results.MetricBitrate: 10.1e9}, {results.MetricBitrate: 9.6e9}, {results.MetricBitrate: 10.4e9}},
		"rps":      {{results.MetricBitrate: 8e9}, {results.MetricBitrate: 8.1e9}, {results.MetricBitrate: 7.9e9}},
	})
	w, err := results.Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	const studyYAML = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: gate}
spec:
  datapaths: [bridge]
  tunings: [baseline, rfs, rps]
  workloads: [{name: tcp, tool: iperf3}]
  trials: {min: 3, max: 10}
  duration: 3s
`
	file := filepath.Join(t.TempDir(), "my.yaml")
	if err := os.WriteFile(file, []byte(studyYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cell := func(tuning string) results.Cell {
		return results.Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}
	}
	err = errors.Join(w.WriteStudy([]byte(studyYAML)),
		w.WriteEnv(results.Env{Tool: "cnibench", Origin: &results.Origin{Command: []string{"cnibench", "run", file}}}),
		w.WriteStops([]results.Stop{
			{Cell: cell("baseline"), Metric: results.MetricBitrate, Status: "max", N: 3, TrialSeconds: 4},
			{Cell: cell("rfs"), Metric: results.MetricBitrate, Status: "futile", N: 3, TrialSeconds: 4, Decision: "undecided", Versus: "baseline", ToDecide: 40},
			{Cell: cell("rps"), Metric: results.MetricBitrate, Status: "max", N: 3, TrialSeconds: 4, Decision: "worse", Versus: "baseline"},
		}), w.Close())
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"report", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"decisions against baseline (1 worse, 1 undecided):",
		"to decide the undecided cell, rerun with --set 'tunings=[baseline, rfs]' --set trials.max=40",
		"\n  cnibench run " + file + " --set 'tunings=[baseline, rfs]' --set trials.max=40\n", "report: " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The narrowed study is the study's own baseline and rfs.
	out.Reset()
	if code := Main(context.Background(), []string{"show", file, "--set", "tunings=[baseline, rfs]", "--set", "trials.max=40"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "tunings:\n        - baseline\n        - rfs\n    baseline") {
		t.Errorf("show of the rerun: exit %d, %s\n%s", code, errb.String(), out.String())
	}
	// Killed before rps's stop: the run says to resume it, not to rerun.
	b, _ := json.Marshal([]results.Stop{{Cell: cell("baseline"), Metric: results.MetricBitrate, Status: "max", N: 3, TrialSeconds: 4},
		{Cell: cell("rfs"), Metric: results.MetricBitrate, Status: "futile", N: 3, TrialSeconds: 4, Decision: "undecided", Versus: "baseline", ToDecide: 40}})
	if err := os.WriteFile(filepath.Join(dir, results.StopsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"report", dir}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "warning: this run did not finish: it ended (interrupted, killed or stopped by an error) before 1 of its 3 cells were done;") ||
		!strings.Contains(out.String(), "cnibench run --resume "+dir+"\n") || strings.Contains(out.String(), "to decide") {
		t.Errorf("an unfinished run: exit %d, %s\n%s", code, errb.String(), out.String())
	}
}

// report and compare given advise's output instead of a run say so, exit
// 2, and point at the A/B runs inside it.
func TestAdviseDirIsNotARun(t *testing.T) {
	adv := t.TempDir()
	if err := os.WriteFile(filepath.Join(adv, advise.FileJSON), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := writeRun(t, map[string][]map[string]float64{"baseline": {{results.MetricBitrate: 1e9}}})
	for _, args := range [][]string{{"report", adv}, {"compare", adv, run}, {"compare", run, adv}} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &out, &errb)
		if code != ExitBadInput || !strings.Contains(errb.String(), adv+" is not a run directory: it is advise's output (advice.json), and it holds no A/B run") {
			t.Errorf("%q: exit %d, %s", args, code, errb.String())
		}
	}
	// With --prove it holds the A/B runs: named, so the user can open one.
	ab := filepath.Join(adv, "prove-rfs")
	if err := os.Mkdir(ab, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ab, results.StudyFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"report", adv}, &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), "its A/B runs are "+ab) {
		t.Errorf("exit %d, %s", code, errb.String())
	}
}

// A run whose cell kept one core busy, second by second (cpu.jsonl),
// ends with the one-core note and, its study measuring the baseline
// only, the command that measures receive steering beside it.
func TestReportPrintsOneCore(t *testing.T) {
	dir := writeOneCoreRun(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"report", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"note: 1 cell kept one core at least 95% busy", report.SteerLine + "\n  cnibench run my.yaml --set 'tunings=[baseline, rps, rfs]'\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// `advise --run DIR` sets the run's findings beside the inspection: the
// cell one core bound, with what answers it here (rfs where it is a
// candidate, else why not); a directory that holds no run is bad input.
func TestAdviseRun(t *testing.T) {
	dir := writeOneCoreRun(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"advise", "--run", dir, "--rule", "rfs", "--out", filepath.Join(t.TempDir(), "a")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := regexp.MustCompile(`(?m)^- one-core \(` + regexp.QuoteMeta(dir) + `\): 1 of its 1 cells were bound by one core: bridge tcp baseline r=1 on the server node ` +
		`\(a core 99% busy, 70% of it softirq, another 88% idle, in 2 of 2 trials\); .*; (answered by the candidate rfs \(below\)|no candidate here: rfs: .*)\.$`)
	if !want.MatchString(out.String()) {
		t.Errorf("advice lacks the run's one-core finding:\n%s", out.String())
	}
	if strings.Contains(out.String(), "- steering") || strings.Contains(out.String(), "did not finish") {
		t.Errorf("a steering finding in a run that measured the baseline only, or a finished run called unfinished:\n%s", out.String())
	}
	// The same trials of an adaptive run killed before its stops: what
	// it showed is what it measured so far.
	adaptive := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: oc}\nspec:\n  datapaths: [bridge]\n  workloads: [{name: tcp, tool: iperf3}]\n  trials: {min: 2, max: 4}\n  duration: 3s\n"
	if err := os.WriteFile(filepath.Join(dir, results.StudyFile), []byte(adaptive), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"advise", "--run", dir, "--rule", "rfs", "--out", filepath.Join(t.TempDir(), "b")}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "## What the run showed\n\n"+dir+" did not finish (1 of its 1 cells were not done): what it showed is what it measured so far.\n") {
		t.Errorf("advise --run of an unfinished run: exit %d, %s\n%s", code, errb.String(), out.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main(context.Background(), []string{"advise", "--run", t.TempDir()}, &out, &errb); code != ExitBadInput || !strings.Contains(errb.String(), "is not a run directory") {
		t.Errorf("advise --run of an empty directory: exit %d, %s", code, errb.String())
	}
}

// writeOneCoreRun writes a run of two trials of one cell whose busy core
// moved each second, bound by one core in both.
func writeOneCoreRun(t *testing.T) string {
	t.Helper()
	bit := map[string]float64{results.MetricBitrate: 5e9}
	dir := writeRun(t, map[string][]map[string]float64{"baseline": {bit, bit}})
	w, err := results.Reopen(dir)
	if err != nil {
		t.Fatal(err)
	}
	cell := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	t0 := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	var points []results.CPUPoint
	for trial := 1; trial <= 2; trial++ {
		for sec := range 3 {
			at := t0.Add(time.Duration(10*trial+sec) * time.Second)
			busy := sec % 2 // the busy core moves each second
			points = append(points,
				results.CPUPoint{Cell: cell, Trial: trial, Time: at, CPU: busy, CPUPercent: results.CPUPercent{Idle: 1, SoftIRQ: 70}},
				results.CPUPoint{Cell: cell, Trial: trial, Time: at, CPU: 1 - busy, CPUPercent: results.CPUPercent{Idle: 88}})
		}
	}
	err = errors.Join(w.AppendCPU(points),
		w.WriteStudy([]byte("apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: oc}\nspec:\n  datapaths: [bridge]\n  workloads: [{name: tcp, tool: iperf3}]\n  trials: 2\n  duration: 3s\n")),
		w.WriteEnv(results.Env{Tool: "cnibench", Origin: &results.Origin{Command: []string{"cnibench", "run", "my.yaml"}}}), w.Close())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A run directory whose raw files do not read is bad input to report,
// as to compare (exit 2, the file and line named); one read with a
// warning (a trial removed from samples.jsonl after the run) is built,
// and the warning printed beside the decisions it concerns.
func TestReportRawFiles(t *testing.T) {
	dir := writeRun(t, map[string][]map[string]float64{"baseline": {{results.MetricBitrate: 1e9}, {results.MetricBitrate: 1.1e9}}})
	cell := results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	b, _ := json.Marshal([]results.Stop{{Cell: cell, Metric: results.MetricBitrate, Status: "max", N: 3}})
	if err := os.WriteFile(filepath.Join(dir, results.StopsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"report", dir}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "warning: stops.json and samples.jsonl count different trials for 1 cell (bridge/baseline/tcp/r=1 stopped after 3, samples.jsonl holds 2)") {
		t.Errorf("a removed trial: exit %d, %s\n%s", code, errb.String(), out.String())
	}
	if md, _ := os.ReadFile(filepath.Join(dir, results.SummaryMD)); !strings.Contains(string(md), "**Warning: stops.json and samples.jsonl count different trials for 1 cell") {
		t.Errorf("summary.md lacks the warning:\n%s", md)
	}
	f, err := os.OpenFile(filepath.Join(dir, results.SamplesFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"nope\": 1}\n")
	f.Close()
	out.Reset()
	errb.Reset()
	if code := Main(context.Background(), []string{"report", dir}, &out, &errb); code != ExitBadInput ||
		!strings.Contains(errb.String(), filepath.Join(dir, results.SamplesFile)+":3: cell.datapath, cell.tuning, cell.workload missing") {
		t.Errorf("a line that is no sample: exit %d, stderr %q", code, errb.String())
	}
}
