package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// writeClientCoresRun is a run on a cluster whose server node has 2 CPUs
// and whose client node, sampled apart, has 6.
func writeClientCoresRun(t *testing.T, dir string) {
	t.Helper()
	s := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline, rfs]")
	cores := func(n int, idle float64) []results.CoreStat {
		var out []results.CoreStat
		for cpu := range n {
			out = append(out, results.CoreStat{CPU: cpu, CPUPercent: results.CPUPercent{Idle: idle + float64(cpu), SoftIRQ: 10}})
		}
		return out
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		for _, tn := range []string{"baseline", "rfs"} {
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: 1},
				Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: 9e9 + float64(trial)*1e8}, Cores: cores(2, 40), ClientCores: cores(6, 70)})
		}
	}
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "cc", Engine: "kube", CPUs: 2, Started: t0}, samples)
}

// A cluster's client node sampled apart gets its own per-core tables
// and figures, with its own cores as columns; the server's tables keep
// the server's cores. A run without client cores has none of them.
func TestClientCoresInReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeClientCoresRun(t, dir)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	server := mdSection(t, md, "### core_idle per core (%)\n")
	client := mdSection(t, md, "### core_idle per core of the client node (%)\n")
	if strings.Contains(server, "cpu 2") || !strings.Contains(server, "cpu 1") {
		t.Errorf("server's idle table has other cores than 0-1:\n%s", server)
	}
	if !strings.Contains(client, "| cpu 0 | cpu 1 | cpu 2 | cpu 3 | cpu 4 | cpu 5 |") || !strings.Contains(client, "75.0") {
		t.Errorf("client's idle table is not cores 0-5 with core 5 at 75%%:\n%s", client)
	}
	mdSection(t, md, "### core_softirq per core of the client node (%)\n")
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	for _, want := range []string{"Per-core idle % of the client node", "client node&#39;s idle per core, 1 replica"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	plain, _ := syntheticDir(t)
	if err := Build(plain); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(plain, results.SummaryMD)); strings.Contains(md, "client node (%)") {
		t.Error("a run without client cores has client per-core tables")
	}
}

// mdSection is the table under a summary.md heading, up to the next
// heading; the test fails without the heading.
func mdSection(t *testing.T, md, head string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, head)
	if !ok {
		t.Fatalf("summary.md lacks %q", head)
	}
	table, _, _ := strings.Cut(rest, "\n\n#")
	return table
}

// mdRow returns the first line of md that starts with "| "+label+" |": a
// row of a table whose rows are metrics.
func mdRow(t *testing.T, md, label string) string {
	t.Helper()
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| "+label+" |") {
			return line
		}
	}
	t.Fatalf("summary.md has no row %q:\n%s", label, md)
	return ""
}
