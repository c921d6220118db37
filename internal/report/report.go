// Package report rebuilds a run directory's derived files — summary.csv,
// summary.json, summary.md and a self-contained report.html — from its
// raw files. The numbers come from one analysis.Model; this package only
// formats them: tables are built once (tables.go) and rendered to HTML by
// the page template and to Markdown by table.markdown.
//
// The HTML has no external resources: CSS is inline and figures are inline
// SVG drawn with gonum/plot, so a report can be mailed or archived as one
// file. Figures are drawn generically from the summary rows (any study with
// bitrate and per-core metrics gets them); the rps-rfs study's figures are
// the normalized bitrate over replicas and per-core idle and softirq bars.
package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Build loads the run in dir, summarizes it and writes summary.csv,
// summary.json, summary.md and report.html there, each replaced
// atomically. Only the raw files are read, so run directories written
// before summary.json existed build as well.
func Build(dir string) error {
	run, s, err := Open(dir)
	if err != nil {
		return err
	}
	return Write(run, s)
}

// Open reads what a report is built from: the run's raw files and the
// study it ran. Its errors are the run directory's (a corrupt line, a
// study.yaml that does not decode), which `cnibench report` tells apart
// from a failure to write the pages.
func Open(dir string) (*results.Run, *study.Study, error) {
	run, err := results.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	s, err := decodeStudy(run.Study)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, results.StudyFile), err)
	}
	return run, s, nil
}

// Write summarizes an opened run and writes its pages into its directory.
func Write(run *results.Run, s *study.Study) error {
	dir := run.Dir
	// The numbers are of the study without what a mislabelled cluster
	// run left out; the pages get the study as stored, whose header
	// says how many that was (clusterLine).
	ms, _, _ := mislabelled(run.Env, s)
	m := analysis.Build(ms, run.Samples)
	m.AddRun(ms, run)
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{results.SummaryCSV, func(w io.Writer) error { return analysis.WriteCSV(w, m.Rows, m.Stops, m.Trials()) }},
		{analysis.SummaryJSON, func(w io.Writer) error { return analysis.WriteJSON(w, m) }},
		{results.SummaryMD, func(w io.Writer) error { return writeMarkdown(w, s, m, run) }},
		{results.ReportHTML, func(w io.Writer) error { return writeHTML(w, run, s, m) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// decodeStudy reads the resolved study the run stored. It is not validated
// again: validation needs the catalog of the binary that ran it, and a
// report must still be buildable by a binary that lacks a datapath.
func decodeStudy(b []byte) (*study.Study, error) {
	var s study.Study
	if err := yaml.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	s.Defaults()
	return &s, nil
}
