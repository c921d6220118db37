package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// TestGlance: the report opens with each tuning against the baseline in
// a word and a number, the decision the normalized table gives the cell
// (rfs+ in the synthetic run: equal at 1 pair on its paired interval,
// undecided at 4, better at 16 beside the paper's 1.24); cells without
// samples say so, the baseline has no row, and a study of one tuning has
// no such section.
func TestGlance(t *testing.T) {
	dir, _ := syntheticDir(t)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	glance, _, _ := strings.Cut(md, "## calico-vxlan / tcp")
	glance, _, _ = strings.Cut(glance, "## What each tuning set")
	for _, want := range []string{
		"## At a glance\n\n| calico-vxlan / tcp: tuning | 1 replica | 4 replicas | 16 replicas |",
		"| rfs+ | equal ×0.99 (n=3) · paper 1.205 | undecided ×1.03 (n=3) · paper 1.165 | better ×1.20 (n=3) · paper 1.24 |",
		"| rps | missing · paper 1.081 | missing · paper 1.02 | missing · paper 1.085 |",
		"equal within ±5% of it",
	} {
		if !strings.Contains(glance, want) {
			t.Errorf("summary.md's glance lacks %q:\n%s", want, glance)
		}
	}
	if strings.Contains(glance, "| baseline |") {
		t.Errorf("the baseline has a row of its own:\n%s", glance)
	}
	// The same cells in the normalized table: the glance repeats their
	// decisions, it does not make its own.
	for _, want := range []string{"paired-t, 3 pairs: equal", "better · paper 1.24"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md's normalized table lacks %q", want)
		}
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	if !strings.Contains(page, "<h2>At a glance</h2>") || strings.Index(page, "<h2>At a glance</h2>") > strings.Index(page, "<h2>calico-vxlan / tcp</h2>") {
		t.Error("report.html does not open with the glance")
	}

	wdir := filepath.Join(t.TempDir(), "run")
	writeWorkloadsRun(t, wdir)
	if err := Build(wdir); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, filepath.Join(wdir, results.SummaryMD)); strings.Contains(md, "At a glance") {
		t.Error("a study of one tuning has a glance at tunings")
	}
}

// A study of several datapaths with tunings at one replica count opens
// with one datapath × tuning table per workload, not a one-column table
// per datapath; a tuning a datapath did not run says so.
func TestGlanceByDatapath(t *testing.T) {
	s := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline, rps, rfs]", "datapaths=[calico-vxlan, {name: flannel-vxlan, type: calico-vxlan}]")
	t0 := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 2; trial++ {
		for _, dp := range []string{"calico-vxlan", "flannel-vxlan"} {
			for i, tn := range []string{"baseline", "rps", "rfs"} {
				if dp == "flannel-vxlan" && tn == "rps" {
					continue
				}
				samples = append(samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: 1},
					Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
					Metrics: map[string]float64{results.MetricBitrate: (1 + 0.5*float64(i)) * (9e9 + float64(trial)*1e7)}})
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "g", Engine: "local", CPUs: 2, Started: t0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	glance := mdSection(t, readFile(t, filepath.Join(dir, results.SummaryMD)), "## At a glance\n")
	for _, want := range []string{
		"| tcp at 1 replica: datapath | rps | rfs |",
		"| calico-vxlan | better ×1.50 (n=2) · paper 1.081 | better ×2.00 (n=2) · paper 1.254 |",
		"| flannel-vxlan | missing · paper 1.081 | better ×2.00 (n=2) · paper 1.254 |",
	} {
		if !strings.Contains(glance, want) {
			t.Errorf("glance lacks %q:\n%s", want, glance)
		}
	}
	if strings.Contains(glance, "calico-vxlan / tcp: tuning") {
		t.Errorf("a table per datapath:\n%s", glance)
	}
	// report.html draws it: a group of bars per datapath, from 1.
	figs := newNumbers(analysis.Build(s, samples)).glanceFigures(s)
	if len(figs) != 1 || figs[0].Missing != "" || figs[0].Title != "bitrate / baseline by datapath (tcp, 1 replica)" {
		t.Fatalf("glance figures %+v", figs)
	}
	for _, want := range []string{">calico-vxlan<", ">flannel-vxlan<", ">rps<", ">rfs<"} {
		if !strings.Contains(string(figs[0].SVG), want) {
			t.Errorf("the glance figure lacks %q", want)
		}
	}
	page := readFile(t, filepath.Join(dir, results.ReportHTML))
	if !strings.Contains(page, "bitrate / baseline by datapath (tcp, 1 replica)") {
		t.Error("report.html lacks the glance figure")
	}
	// One datapath: the tables say it; no figure.
	one := quickStudy(t, "replicas=[1]", "trials=2", "tunings=[baseline, rps, rfs]")
	calico := slices.DeleteFunc(slices.Clone(samples), func(x results.Sample) bool { return x.Cell.Datapath != "calico-vxlan" })
	if figs := newNumbers(analysis.Build(one, calico)).glanceFigures(one); len(figs) != 0 {
		t.Errorf("a glance figure of one datapath: %+v", figs)
	}
}

// A cell a run did not plan (a study with spec.only runs part of its
// lists' product) reads "not run" where a table has a place for it, a
// planned cell without its value "missing"; a run without stops.json
// says nothing of its plan.
func TestNotRunCells(t *testing.T) {
	c := func(tn string, reps int) results.Cell {
		return results.Cell{Datapath: "bridge", Tuning: tn, Workload: "tcp", Replicas: reps}
	}
	n := newNumbers(analysis.Model{Stops: []results.Stop{{Cell: c("baseline", 1)}, {Cell: c("rps", 1)}}})
	if got := n.absent(c("rps", 1)); got != "missing" {
		t.Errorf("a planned cell: %q", got)
	}
	if got := n.absent(c("rps", 4)); got != "not run" {
		t.Errorf("a cell not planned: %q", got)
	}
	if got := newNumbers(analysis.Model{}).absent(c("rps", 4)); got != "missing" {
		t.Errorf("a run without stops: %q", got)
	}
}
