// Package report rebuilds a run directory's derived files — summary.csv,
// summary.md and a self-contained report.html — from its raw files.
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
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Build loads the run in dir, summarizes it and writes summary.csv,
// summary.md and report.html there, each replaced atomically.
func Build(dir string) error {
	run, err := results.Load(dir)
	if err != nil {
		return err
	}
	s, err := decodeStudy(run.Study)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, results.StudyFile), err)
	}
	rows := analysis.Summarize(s, run.Samples)

	var buf bytes.Buffer
	if err := analysis.WriteCSV(&buf, rows); err != nil {
		return fmt.Errorf("summary.csv: %w", err)
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, results.SummaryCSV), buf.Bytes()); err != nil {
		return err
	}
	buf.Reset()
	if err := analysis.WriteMarkdown(&buf, s, rows); err != nil {
		return fmt.Errorf("summary.md: %w", err)
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, results.SummaryMD), buf.Bytes()); err != nil {
		return err
	}
	buf.Reset()
	if err := writeHTML(&buf, run, s, rows); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return results.WriteFileAtomic(filepath.Join(dir, results.ReportHTML), buf.Bytes())
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
