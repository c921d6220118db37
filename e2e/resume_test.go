package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/kerneltest"
)

const resumeStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: resume
spec:
  datapaths: [bridge, host]
  tunings: [baseline, {name: rps, rps: {cpus: all}, sysctls: {net.core.netdev_budget: 301}}]
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
  replicas: [1]
  trials: 4
  duration: 3s
  warmup: 1s
`

// idleBound is what the resume study's rps tuning adds where the kernel
// can bound the CPUs' idle states (probe feature cpuidle): the limit is
// then set during its trials, and must be back after the kill.
const idleBound = ", cpuIdle: {maxExitLatency: 0us}"

// resumeStudyHere is resumeStudy with idleBound where this machine takes
// it, and whether it does.
func resumeStudyHere() (string, bool) {
	if ok, _ := kerneltest.IdleBoundable(); !ok {
		return resumeStudy, false
	}
	return strings.Replace(resumeStudy, "sysctls: {net.core.netdev_budget: 301}", "sysctls: {net.core.netdev_budget: 301}"+idleBound, 1), true
}

// countedTrials reads samples.jsonl: the counted (cell, trial) pairs
// with how often each appears, and the number of lines.
func countedTrials(t *testing.T, dir string) (map[string]int, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if os.IsNotExist(err) {
		return map[string]int{}, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, lines := map[string]int{}, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var s struct {
			Cell      struct{ Datapath, Tuning string }
			Trial     int
			Discarded string
			Error     string
		}
		if json.Unmarshal(sc.Bytes(), &s) != nil {
			continue // the partial last line a kill leaves
		}
		lines++
		if s.Discarded == "" && s.Error == "" {
			out[fmt.Sprintf("%s/%s/%d", s.Cell.Datapath, s.Cell.Tuning, s.Trial)]++
		}
	}
	return out, lines
}

// TestKill9ThenResume kills a run with SIGKILL after some trials, cleans
// up, resumes it, and checks the run ends with every cell's trials
// exactly once: the set an uninterrupted run of this fixed design has.
// Two datapaths, so the kill falls in a run of shared rounds, whose
// resume rebuilds a cluster only for the rounds' trials still missing.
// The rps tuning also sets a global sysctl (netdev_budget) and, where the
// kernel can, every CPU's idle latency limit, which the host has back at
// the end whatever trial the kill fell in.
func TestKill9ThenResume(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	text, idle := resumeStudyHere()
	t.Logf("the rps tuning bounds the CPUs' idle states too: %v", idle)
	study := writeStudy(t, text)
	var errb syncBuffer
	cmd := startCnibench(t, &errb, &errb, "run", study, "--out", out, "--journal-dir", jdir)
	var id string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !alive(cmd.Process.Pid) {
			t.Fatalf("run ended before it was killed: %s", errb.String())
		}
		if got, _ := countedTrials(t, out); len(got) >= 3 {
			journals, _ := filepath.Glob(filepath.Join(jdir, "*.journal"))
			if len(journals) == 1 {
				id = strings.TrimSuffix(filepath.Base(journals[0]), ".journal")
			}
			break
		}
	}
	if id == "" {
		t.Fatalf("run never stored 3 trials: %s", errb.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	got, _ := countedTrials(t, out)
	if len(got) >= 16 {
		t.Fatalf("the run finished before the kill (%d trials); the test shows nothing", len(got))
	}
	if r := cnibench(t, nil, "run", "--resume", out, "--journal-dir", jdir); r.code != 2 || !strings.Contains(r.stderr, "cleanup") {
		t.Errorf("resume before cleanup: exit %d, want 2 naming cleanup:\n%s", r.code, r.stderr)
	}
	if r := cnibench(t, nil, "cleanup", "--run", id, "--journal-dir", jdir); r.code != 0 {
		t.Fatalf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Its report says it did not finish and how to continue it.
	if r := cnibench(t, nil, "report", out); r.code != 0 || !strings.Contains(r.stdout, "warning: this run did not finish") ||
		!strings.Contains(r.stdout, "cnibench run --resume "+out+"\n") {
		t.Errorf("report of the killed run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cnibench(t, nil, "run", "--resume", out, "--set", "trials=9", "--journal-dir", jdir); r.code != 2 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("resume with --set: exit %d, want 2 with one line:\n%s", r.code, r.stderr)
	}
	r := cnibench(t, nil, "run", "--resume", out, "--journal-dir", jdir)
	if r.code != 0 || strings.Contains(r.stdout, "did not finish") {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// It says what it kept, and counts only the trials left.
	if kept := fmt.Sprintf("resumed: %d counted trials kept from run %s", len(got), id); !strings.Contains(r.stderr, kept) ||
		!strings.Contains(r.stderr, fmt.Sprintf("running up to %d trials\n", 16-len(got))) {
		t.Errorf("resume's progress lacks %q or \"running up to %d trials\":\n%s", kept, 16-len(got), r.stderr)
	}
	final, _ := countedTrials(t, out)
	for _, dp := range []string{"bridge", "host"} {
		for _, tu := range []string{"baseline", "rps"} {
			for k := 1; k <= 4; k++ {
				key := fmt.Sprintf("%s/%s/%d", dp, tu, k)
				if final[key] != 1 {
					t.Errorf("%s counted %d times, want once", key, final[key])
				}
			}
		}
	}
	if len(final) != 16 {
		t.Errorf("counted trials %v, want the 16 of an uninterrupted run", final)
	}
	for k, n := range got {
		if final[k] != n {
			t.Errorf("trial %s from before the kill was lost or redone", k)
		}
	}
	for _, f := range []string{"report.html", "summary.csv", "env.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("after resume: %v", err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "env.json"))
	if !strings.Contains(string(b), "resumed: ") {
		t.Errorf("env.json does not note the resume")
	}
	// The run's origin is the command that started it, not --resume.
	var env struct {
		Origin struct{ Command []string }
	}
	if err := json.Unmarshal(b, &env); err != nil || strings.Join(env.Origin.Command, " ") != "cnibench run "+study {
		t.Errorf("env.json's origin %q is not the first run's command (%v)", env.Origin.Command, err)
	}
	// A finished run resumes to nothing new.
	_, lines := countedTrials(t, out)
	if r := cnibench(t, nil, "run", "--resume", out, "--journal-dir", jdir); r.code != 0 || !strings.Contains(r.stderr, "no trial left to run") {
		t.Fatalf("resume of a finished run: exit %d, want 0 and \"no trial left to run\"\n%s", r.code, r.stderr)
	}
	if _, again := countedTrials(t, out); again != lines {
		t.Errorf("resuming a finished run added %d lines", again-lines)
	}
	// What the tuning set is still on record, though the last resume ran
	// none of its trials: the report's "What each tuning set" reads it.
	var rec struct {
		Tunings map[string][]struct{ Where, Knob, Value string }
	}
	b, _ = os.ReadFile(filepath.Join(out, "env.json"))
	if err := json.Unmarshal(b, &rec); err != nil || !strings.Contains(fmt.Sprint(rec.Tunings["rps"]), "{host net.core.netdev_budget 301}") ||
		!strings.Contains(fmt.Sprint(rec.Tunings["rps"]), "{node rps_cpus ") {
		t.Errorf("env.json's tunings after the resumes: %v (%v)", rec.Tunings, err)
	}
	if idle && !strings.Contains(fmt.Sprint(rec.Tunings["rps"]), "{host pm_qos_resume_latency_us n/a}") {
		t.Errorf("env.json's tunings lack the idle latency limit: %v", rec.Tunings)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "summary.md")); !strings.Contains(string(md), "| host | net.core.netdev_budget | 301 |") {
		t.Errorf("summary.md does not say what the tuning set")
	}
	assertUntouched(t, before, "cnb-"+id)
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left after the runs: %v", ents)
	}
}
