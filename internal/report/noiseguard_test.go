package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// writeNoiseRun is a run on a cluster (engine kube, shared: its nodes on
// one kernel) with two counted trials, one attempt the client node's
// steal disturbed and one that failed before it measured anything.
func writeNoiseRun(t *testing.T, dir string, shared bool) {
	t.Helper()
	s := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline]")
	cell := results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: "baseline", Workload: s.Variants()[0].Name, Replicas: 1}
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	pct := func(v float64) *float64 { return &v }
	noise := func(server, client float64) *results.Noise {
		n := &results.Noise{StealPct: server, WindowPct: pct(100)}
		if !shared {
			n.ClientStealPct = pct(client)
		}
		return n
	}
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		samples = append(samples, results.Sample{Cell: cell, Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
			Metrics: map[string]float64{results.MetricBitrate: 9e9 + float64(trial)*1e8}, Noise: noise(1, 2)})
	}
	samples[1].Attempt = 3
	samples = append(samples,
		results.Sample{Cell: cell, Trial: 2, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second), Metrics: map[string]float64{results.MetricBitrate: 5e9},
			Noise: noise(2, 30), Discarded: "disturbed, repeated: steal 30.0% on the client node > 10%"},
		results.Sample{Cell: cell, Trial: 2, Attempt: 2, Start: t0, End: t0.Add(time.Second), Metrics: map[string]float64{},
			Error: "iperf3: unable to connect", Discarded: "failed"})
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "ng", Engine: "kube", CPUs: 2, Started: t0, SharedKernel: shared}, samples)
}

// A cluster run's report says in one line, under its header's cluster
// line, what the noise guard measured there (steal of which nodes) and
// what it could not (outside CPU, the busy share before a trial); its
// marked trials show each node's steal and "n/m (cluster)" for the
// readings the engine cannot take, where before they showed a bare "-",
// as for an attempt that failed before it measured. A local run's
// report has no such line.
func TestReportSaysWhatTheNoiseGuardSawOnACluster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeNoiseRun(t, dir, false)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	line := "Noise guard on this cluster: it measured the steal time of the server node and of the client node (each read through its agent; it judged the larger)"
	notSeen := "it could not measure the CPU of processes outside the run or how busy the nodes were before each trial"
	head, _, _ := strings.Cut(md, "\n## ")
	if !strings.Contains(head, line) || !strings.Contains(head, notSeen) {
		t.Errorf("summary.md's header does not say what the noise guard saw:\n%s", head)
	}
	marked := mdSection(t, md, "## Marked trials\n")
	if !strings.Contains(marked, "| server 2.0, client 30.0 | n/m (cluster) | n/m (cluster) | 100 |") {
		t.Errorf("the disturbed attempt's row does not give each node's steal and n/m (cluster):\n%s", marked)
	}
	if !strings.Contains(marked, "| - | - | - | - |") {
		t.Errorf("the failed attempt's row is not all \"-\":\n%s", marked)
	}
	if _, caption, _ := strings.Cut(md, "## Marked trials\n"); !strings.Contains(caption, "outside CPU and busy before read n/m (cluster): not measured") {
		t.Errorf("the marked trials' caption does not say what n/m (cluster) is:\n%s", caption)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	for _, want := range []string{line, notSeen, "<td>server 2.0, client 30.0</td>", "<td>n/m (cluster)</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	plain, _ := syntheticDir(t)
	if err := Build(plain); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(plain, results.SummaryMD)); strings.Contains(md, "Noise guard on") || strings.Contains(md, "n/m (cluster)") {
		t.Error("a local run's summary.md speaks of the noise guard on a cluster")
	}
}

// Nodes on one kernel (a kind-style cluster): one steal, the machine's;
// a cluster run recorded before the client node's steal was says the
// server node's alone was judged.
func TestNoiseGuardLineNodes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeNoiseRun(t, dir, true)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	if !strings.Contains(md, "it measured the steal time of the one kernel both nodes run on") {
		t.Errorf("one kernel: summary.md does not say whose steal was measured:\n%s", md)
	}
	if marked := mdSection(t, md, "## Marked trials\n"); !strings.Contains(marked, "| 2.0 | n/m (cluster) | n/m (cluster) |") {
		t.Errorf("one kernel: the disturbed attempt's row:\n%s", marked)
	}
	if l := (guardView{cluster: true}).line(); !strings.Contains(l, "the steal time of the server node only") {
		t.Errorf("no client steal recorded: %q", l)
	}
}
