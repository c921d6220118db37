package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// Cores that spun in cpuidle's polling state get a per-core polling table
// beside idle, with the note that the kernel counts it as idle, and a
// figure in report.html; a run that measured no polling has neither.
func TestCorePollInReport(t *testing.T) {
	dir := pollRun(t, 1.5, 91.25)
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	table := mdSection(t, md, "### core_poll per core (%)\n")
	if !strings.Contains(table, "91.2") || !strings.Contains(table, "1.5") || !strings.Contains(table, "counts it as idle time") {
		t.Errorf("polling table lacks the tunings' values or the note:\n%s", table)
	}
	if page := readFile(t, filepath.Join(dir, results.ReportHTML)); !strings.Contains(page, "polling per core, 1 replica") {
		t.Error("report.html has no polling figure")
	}
	plain, _ := syntheticDir(t)
	if err := Build(plain); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(plain, results.SummaryMD)); strings.Contains(md, "core_poll") {
		t.Error("a run without polling times has a polling table")
	}
}

// A run whose cores never polled (every trial 0 on every core: a machine
// whose idle states all halt) gets one sentence, not a table and figures
// of zeros.
func TestCorePollNoneInReport(t *testing.T) {
	dir := pollRun(t, 0, 0)
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	section := mdSection(t, md, "### core_poll per core (%)\n")
	if !strings.Contains(section, pollNone) || strings.Contains(section, "| tuning |") {
		t.Errorf("polling section of zeros:\n%s", section)
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	if !strings.Contains(page, "Per-core polling % (counted in idle)</h3><p>0 on every core") || strings.Contains(page, "polling per core, 1 replica") {
		t.Error("report.html draws polling figures of zeros, or lacks the sentence")
	}
}

// pollRun writes and builds a run of baseline and rfs whose two cores
// spent base and rfs percent of each trial polling.
func pollRun(t *testing.T, base, rfs float64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	s := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline, rfs]")
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		for _, tn := range []string{"baseline", "rfs"} {
			cores := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 95}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 93}}}
			for i := range cores {
				p := base
				if tn == "rfs" {
					p = rfs
				}
				cores[i].Poll = &p
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: 1},
				Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: 9e9 + float64(trial)*1e8}, Cores: cores})
		}
	}
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "poll", Engine: "local", CPUs: 2, Started: t0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}
