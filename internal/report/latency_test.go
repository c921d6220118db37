package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// TestLatencyComparedInTables: in a study of tunings, a latency's table
// gives each tuning's ratio to the baseline with its interval and a
// decision where lower is better; the bitrate's absolute table does not
// repeat the normalized table's decision. Across datapaths, the latency
// table gives the ratio to the first datapath.
func TestLatencyComparedInTables(t *testing.T) {
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{"replicas=[1]", "trials=4", "tunings=[baseline, rfs]"}}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for trial := 1; trial <= 4; trial++ {
		for _, tn := range []string{"baseline", "rfs"} {
			g := 1 + 0.001*float64(trial%2)
			if tn == "rfs" {
				g *= 1.2 // 20% slower in every round
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: s.Spec.Datapaths[0].Name, Tuning: tn, Workload: s.Variants()[0].Name, Replicas: 1},
				Trial: trial, Attempt: 1, Start: t0, End: t0.Add(4 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: 9e9 / g, "rtt_p99_us": 40 * g * (1 + 0.05*float64(trial))}})
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, s, results.Env{Tool: "cnibench", RunID: "lat", Engine: "local", CPUs: 2, Started: t0}, samples)
	if err := Build(dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, results.SummaryMD))
	lat := mdSection(t, md, "### rtt_p99_us (us)\n")
	if !strings.Contains(lat, "| rfs | ") || !strings.Contains(lat, "; ×1.200 [") || !strings.Contains(lat, "paired-t, 4 pairs: worse") {
		t.Errorf("rfs's p99 latency, 1.2 times the baseline's in every round, is not compared as worse:\n%s", lat)
	}
	if abs := mdSection(t, md, "### bitrate (Gbit/s)\n"); strings.Contains(abs, "×") {
		t.Errorf("the bitrate's absolute table repeats the normalized table's decision:\n%s", abs)
	}
}
