package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// A cell whose trials kept one core busy while the other idled is listed
// in both reports under "Bound by one core", with the busy core, its
// softirq share and the idle core; a cell that used both cores is not.
func TestOneCoreInReport(t *testing.T) {
	s := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline, rfs]")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		for _, tn := range []string{"baseline", "rfs"} {
			// baseline: core 1 saturated, mostly by softirqs, core 0
			// idle; rfs: both cores half busy.
			cores := []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 85, SoftIRQ: 5}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 1, SoftIRQ: 70}}}
			if tn == "rfs" {
				cores = []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Idle: 45, SoftIRQ: 30}}, {CPU: 1, CPUPercent: results.CPUPercent{Idle: 40, SoftIRQ: 35}}}
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: 1},
				Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: 9e9 + float64(trial)*1e8}, Cores: cores})
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "oc", Engine: "local", CPUs: 2, Started: t0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	sec := mdSection(t, md, "## Bound by one core\n")
	want := "| calico-vxlan tcp baseline r=1 | server | 2 of 2 | cpu 1: 99% busy | 70% of its time | 85% idle |"
	if !strings.Contains(sec, want) {
		t.Errorf("section lacks %q:\n%s", want, sec)
	}
	if strings.Contains(sec, " rfs r=1") {
		t.Errorf("rfs used both cores, yet is listed:\n%s", sec)
	}
	if page := readFile(t, filepath.Join(dir, results.ReportHTML)); !strings.Contains(page, "<h2>Bound by one core</h2>") {
		t.Error("report.html lacks the section")
	}
	plain, _ := syntheticDir(t)
	if err := Build(plain); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(plain, results.SummaryMD)); strings.Contains(md, "Bound by one core") {
		t.Error("a run without such a cell has the section")
	}
}

// The end of `cnibench run` notes cells bound by one core, naming a few.
func TestOneCoreLine(t *testing.T) {
	if l := OneCoreLine(nil); l != "" {
		t.Errorf("no cells: %q", l)
	}
	var cells []analysis.OneCore
	for _, wl := range []string{"http@c8", "svc", "rr", "tcp"} {
		cells = append(cells, analysis.OneCore{Cell: results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: wl, Replicas: 1}})
	}
	want := `note: 4 cells kept one core at least 95% busy while another idled, in at least half of the trials (flannel http@c8 baseline r=1, flannel svc baseline r=1, flannel rr baseline r=1 and 1 more): their numbers are one core's limit, not the machine's (summary.md, "Bound by one core")`
	if l := OneCoreLine(cells); l != want {
		t.Errorf("got  %q\nwant %q", l, want)
	}
	if l := OneCoreLine(cells[:1]); !strings.HasPrefix(l, "note: 1 cell kept one core") {
		t.Errorf("one cell: %q", l)
	}
}

// A run with cells bound by one core whose study measured only the
// built-in baseline is told how to measure receive steering: its own
// command with the rps and rfs tunings beside the baseline. A study that
// has a tuning already, a run without its command, or no bound cell get
// no command; summary.md's section carries the same command.
func TestSteerCommand(t *testing.T) {
	cells := []analysis.OneCore{{Cell: results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "http@c8", Replicas: 1}, Bound: 2, N: 2}}
	o := &results.Origin{Command: []string{"cnibench", "run", "rps-rfs", "--quick"}}
	plain := quickStudy(t, "tunings=[baseline]")
	want := "cnibench run rps-rfs --quick --set 'tunings=[baseline, rps, rfs]'"
	if c := SteerCommand(cells, plain, o); c != want {
		t.Errorf("command %q, want %q", c, want)
	}
	for name, c := range map[string]string{
		"a study with rfs":     SteerCommand(cells, quickStudy(t, "tunings=[baseline, rfs]"), o),
		"a sysctl baseline":    SteerCommand(cells, quickStudy(t, "tunings=[{name: baseline, sysctls: {net.core.busy_read: 50}}]"), o),
		"no recorded command":  SteerCommand(cells, plain, nil),
		"no cell bound by one": SteerCommand(nil, plain, o),
	} {
		if c != "" {
			t.Errorf("%s: command %q, want none", name, c)
		}
	}
	m := analysis.Model{OneCore: cells, Origin: o}
	if txt := oneCoreText(m, plain); !strings.HasSuffix(txt, "(three tunings instead of one): "+want) {
		t.Errorf("caption does not end with the command:\n%s", txt)
	}
}
