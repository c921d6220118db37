package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// withoutWorkload is samples less every trial of workload name: a run
// that gave up on it after failed attempts.
func withoutWorkload(samples []results.Sample, name string) []results.Sample {
	var out []results.Sample
	for _, s := range samples {
		if s.Cell.Workload != name {
			out = append(out, s)
		}
	}
	return out
}

// TestWorkloadWithoutSamplesInReport: a workload whose every trial failed
// (the workloads study's intra given up) is listed under "Cells without
// samples" and keeps its line in the Workloads table, "missing"; it
// vanished from both, as if the study had never asked for it.
func TestWorkloadWithoutSamplesInReport(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	samples = withoutWorkload(samples, "intra")
	m := analysis.Build(s, samples)
	miss := strings.Join(missingCells(m.Rows), "\n")
	if !strings.Contains(miss, "flannel-vxlan / baseline / intra / 1 replica") {
		t.Errorf("cells without samples %q, want intra's", miss)
	}
	md := markdownOf(t, s, m)
	if i := strings.Index(md, "## Cells without samples"); i < 0 || !strings.Contains(md[i:], "intra") {
		t.Errorf("summary.md lists no intra cell without samples")
	}
	sec := buildWorkloads(s, m, samples)
	var intra []string
	for _, r := range sec.Table.Rows {
		if r[1] == "intra" {
			intra = r
		}
	}
	if intra == nil || !strings.Contains(strings.Join(intra, "|"), "missing") {
		t.Errorf("Workloads table rows %v, want intra's with its value missing", sec.Table.Rows)
	}
}

// TestWorkloadsIntroSaysWhatCellsHold: the Workloads section's first
// lines say what its table's cells are, from the cells: in a run of one
// trial per cell, single values without an interval, not "Mean [95% CI]
// over trials"; with intervals, the (n=K) mark beside a cell of fewer
// trials than planned, which its table carries.
func TestWorkloadsIntroSaysWhatCellsHold(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	var one []results.Sample
	for _, smp := range samples {
		if smp.Trial == 1 {
			one = append(one, smp)
		}
	}
	sec := buildWorkloads(s, analysis.Build(s, one), one)
	if !strings.Contains(sec.Intro, "single trial") || strings.Contains(sec.Intro, "[95% CI]") {
		t.Errorf("one-trial intro %q", sec.Intro)
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, page{Name: "t", Workloads: sec}); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); strings.Contains(html, "Mean [95% CI] over trials") || !strings.Contains(html, "single trial") {
		t.Errorf("report.html's Workloads section does not say its cells are single trials")
	}
	m := analysis.Build(s, samples)
	m.TrialsPlanned = 3
	sec = buildWorkloads(s, m, samples)
	if !strings.Contains(sec.Intro, "mean [95% CI] over trials") || !strings.Contains(sec.Intro, "(n=K)") {
		t.Errorf("intro %q, want mean [95%% CI] and the (n=K) mark", sec.Intro)
	}
	if len(sec.Table.Rows) == 0 || !strings.HasSuffix(sec.Table.Rows[0][2], " (n=2)") {
		t.Errorf("Workloads table rows %v, want (n=2) of the 3 planned", sec.Table.Rows)
	}
}

// TestGivenUpAtSetUpInReport: the cells a run gave up because their
// pods could not be set up (one results.SetUpFailed record each, in a
// fixed design that keeps no stops.json) are listed under "Cells without
// samples", which says they were given up, and "Marked trials" gives
// each one's error; the run is not called unfinished.
func TestGivenUpAtSetUpInReport(t *testing.T) {
	s, samples := syntheticWorkloads(t)
	// A fixed design of its two trials, which records no stops.
	s.Spec.Trials, s.Spec.Precision = study.Fixed(2), nil
	if s.RecordsStops() {
		t.Fatal("the study records stops (the test's point is a design that does not)")
	}
	samples = withoutWorkload(samples, "intra")
	run := &results.Run{Samples: samples}
	why := results.GaveUpAtSetUp(1, 2, "flannel-vxlan: scale to 2 pod pairs: cannot allocate memory")
	for _, c := range s.Cells() {
		if c.Workload == "intra" {
			run.Marked = append(run.Marked, results.Sample{Cell: c, Trial: 1, Attempt: 1, Error: why, Discarded: results.SetUpFailed})
		}
	}
	m := analysis.Build(s, samples)
	m.AddRun(s, run)
	md := markdownOf(t, s, m)
	i := strings.Index(md, "## Cells without samples")
	if i < 0 || !strings.Contains(md[i:], "intra") || !strings.Contains(md[i:], "at setting up their datapath or pods") {
		t.Errorf("summary.md does not list intra's cells as given up at their set-up:\n%s", md)
	}
	if !strings.Contains(md, "trial 1: its set-up failed 2 attempts; last: flannel-vxlan: scale to 2 pod pairs: cannot allocate memory") {
		t.Errorf("summary.md's Marked trials do not give the set-up's error")
	}
	if len(m.Unfinished) != 0 || strings.Contains(md, "did not finish") {
		t.Errorf("unfinished %v: a run whose cells were given up at their set-up is finished", m.Unfinished)
	}
}
