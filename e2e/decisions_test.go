package e2e

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const decideStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: decide
spec:
  datapaths: [host, bridge]
  tunings: [baseline]
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
  replicas: [1]
  trials: {min: 3, max: 5}
  margin: 5%
  duration: 2s
  warmup: 1s
`

// TestDatapathsDecideAgainstFirst: an adaptive study of two datapaths
// stops the second one's cell on its decision against the first (or at
// its maximum, undecided), runs the first as long as the second, and
// says so at the end of the run, in stops.json, summary.csv and the
// report, naming the first datapath.
func TestDatapathsDecideAgainstFirst(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	r := cnibench(t, nil, "run", writeStudy(t, decideStudy), "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	assertUntouched(t, before, "")
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left: %v", ents)
	}
	if !regexp.MustCompile(`decisions against host \(1 (better|worse|equal|undecided)\):\n  bridge tcp baseline r=1: `).MatchString(r.stdout) {
		t.Errorf("the run's end does not give bridge's decision against host:\n%s", r.stdout)
	}
	var stops []struct {
		Cell     struct{ Datapath string } `json:"cell"`
		N        int                       `json:"n"`
		Decision string                    `json:"decision"`
		Versus   string                    `json:"versus"`
		// The runner's count of a trial's machine time, and for an
		// undecided cell the trials that would decide it.
		TrialSeconds float64 `json:"trial_seconds"`
		ToDecide     int     `json:"trials_to_decide"`
	}
	b, err := os.ReadFile(filepath.Join(out, "stops.json"))
	if err := errors.Join(err, json.Unmarshal(b, &stops)); err != nil || len(stops) != 2 {
		t.Fatalf("stops.json: %v: %s", err, b)
	}
	host, bridge := stops[0], stops[1]
	if host.Cell.Datapath != "host" || host.Decision != "" || bridge.Versus != "host" || bridge.Decision == "" ||
		bridge.N < 3 || bridge.N > 5 || host.N != bridge.N {
		t.Errorf("stops %+v: want bridge decided against host in 3 to 5 trials, host as many and undecided", stops)
	}
	if host.TrialSeconds < 2 || bridge.TrialSeconds < 2 {
		t.Errorf("stops %+v: a 2-second trial's machine time not recorded", stops)
	}
	if rerun := strings.Contains(r.stdout, "to decide the undecided cell, rerun with --set trials.max="); rerun != (bridge.Decision == "undecided" && bridge.ToDecide > 0) {
		t.Errorf("the run's end says how to decide bridge: %v; stops %+v\n%s", rerun, stops, r.stdout)
	}
	// seq_versus is found by name: columns are appended to the header
	// over time (docs/statistics.md), so its position is not fixed.
	if versus := csvColumn(t, filepath.Join(out, "summary.csv"), "seq_versus", "bridge"); !slices.Contains(versus, "host") {
		t.Errorf("summary.csv's bridge rows lack the decision's seq_versus host: %q", versus)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if !strings.Contains(string(md), "decision vs host") {
		t.Error("summary.md's repetitions table does not say the decisions are against host")
	}
	// The datapath table gives the run's decision at its looks (marked
	// "(disturbed)" where the noise guard counted a disturbed trial).
	// "×0.869 [0.801, 0.942] paired-t (98.75%), at the look after 3
	// trials: worse", then marks such as "(disturbed)".
	if !regexp.MustCompile(`\| bridge \| [^|]* ×[0-9.]+ \[[0-9.]+, [0-9.]+\] [a-z-]+ \([0-9.]+%\), at the look after [3-5] trials: (better|worse|equal|undecided)( \([a-z ,]+\))? \|`).Match(md) {
		t.Errorf("summary.md's bitrate table lacks bridge's decision at the looks:\n%s", md)
	}
	// advise reads the run for what it showed (this one measured no
	// steering; one core may or may not have bound it).
	adv := cnibench(t, nil, "advise", "--run", out, "--out", filepath.Join(t.TempDir(), "advice"))
	if adv.code != 0 || !strings.Contains(adv.stdout, "## What the run showed\n\n") || strings.Contains(adv.stdout, "- steering (") {
		t.Errorf("advise --run: exit %d, %s\n%s", adv.code, adv.stderr, adv.stdout)
	}
}

// csvColumn is column name of the summary.csv rows whose datapath is
// datapath.
func csvColumn(t *testing.T, path, name, datapath string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	col, dp := slices.Index(rows[0], name), slices.Index(rows[0], "datapath")
	if col < 0 || dp < 0 {
		t.Fatalf("%s: no column %s or datapath in %q", path, name, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		if r[dp] == datapath {
			out = append(out, r[col])
		}
	}
	return out
}
