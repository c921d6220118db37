package app

import (
	"bytes"
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
	fr, err := readRun(dir)
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
