package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/results"
)

// A run whose study.yaml the format no longer reads (a field of another
// version) was reported as showing nothing, not partial, and what
// reading it tolerated (no env.json) was never said: the pages now say
// that its study could not be read, which findings were not looked for
// for it, and each warning, as report and compare do.
func TestAdviseRunStudyUnreadable(t *testing.T) {
	dir := writeRunDir(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: later}
spec:
  datapaths: [bridge]
  workloads: [{name: tcp, tool: iperf3}]
  trials: 3
  duration: 3s
  fromAnotherVersion: true
`, []results.Sample{{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "tcp", Replicas: 1}, Trial: 1,
		Metrics: map[string]float64{results.MetricBitrate: 1e9}}}, nil)
	fr, err := readRun(dir, "local")
	if err != nil {
		t.Fatal(err)
	}
	if fr.study != nil || fr.studyErr == nil || !strings.Contains(fr.studyErr.Error(), "fromAnotherVersion") {
		t.Fatalf("study %v, error %v: want why it could not be read", fr.study, fr.studyErr)
	}
	rep := advise.Build(nil, &inspect.Inspection{}, time.Now())
	rep.AddSightings(dir, nil)
	rep.Partial = append(rep.Partial, fr.notes()...)
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"study.yaml could not be read (",
		"fromAnotherVersion",
		"the findings that need it (steering, overlay, idle-wake) were not looked for, and whether the run finished is not known.",
		"reading " + dir + ": " + dir + "/env.json is missing: no environment metadata.",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("advice.md lacks %q:\n%s", want, md.String())
		}
	}
	// A run whose study reads and that finished has nothing to say but
	// what reading it tolerated.
	ok := twoDatapathRun(t)
	if n := ok.notes(); len(n) != 1 || !strings.Contains(n[0], "env.json is missing") {
		t.Errorf("notes of a readable run without env.json: %q", n)
	}
}

// advise --run of a run made on another engine than advise's is bad
// input, refused before anything is inspected: a cluster's run read
// beside this machine's candidates gave its server node's findings as
// reasons for knobs read here, and --prove measured its cells on
// emulated nodes as "the run's own study". The message names both
// engines and the flag to use.
func TestAdviseRunOtherEngine(t *testing.T) {
	withEngine := func(engine string) string {
		dir := twoDatapathRun(t).dir
		b, err := json.Marshal(results.Env{Tool: "cnibench", Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	kubeRun, localRun := withEngine("kube"), withEngine("local")
	for _, c := range []struct {
		dir, engine, want string
	}{
		{kubeRun, "local", "the run was made on the kube engine (a cluster's nodes), and advise --engine local reads this machine; give --engine kube with the run's cluster flags"},
		{localRun, "kube", "the run was made on the local engine (nodes emulated on the machine it ran on), and advise --engine kube reads a cluster's server node; leave --engine kube out"},
		{kubeRun, "kube", ""},
		{localRun, "local", ""},
		{twoDatapathRun(t).dir, "kube", ""}, // no env.json: the engine is not known
	} {
		fr, err := readRun(c.dir, c.engine)
		if c.want == "" {
			if err != nil || fr.run == nil {
				t.Errorf("%s with --engine %s: %v", c.dir, c.engine, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--engine %s: %v, want %q", c.engine, err, c.want)
		}
		if code := exitCode(context.Background(), newRoot(io.Discard, io.Discard), err, io.Discard); code != ExitBadInput {
			t.Errorf("--engine %s: exit %d, want %d", c.engine, code, ExitBadInput)
		}
	}
}
