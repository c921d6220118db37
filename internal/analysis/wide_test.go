package analysis

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// The rps-rfs quick run of 2026-11-30: rps+ and rps at one pair spread
// far more than the other cells of their workload (stats.WideCells), and
// only they get Row.Wide, with their trials in the order they ran; a
// second workload's cells are judged among themselves (its one noisy
// cell has no neighbours enough to be judged against), and
// summary.json keeps Wide.
func TestMarkWide(t *testing.T) {
	trials := map[string]map[int][]float64{
		"baseline": {1: {14.71, 14.66, 14.94, 15.13, 15.08}, 4: {7.11, 6.95, 7.0, 7.03, 7.0}},
		"rfs":      {1: {12.61, 12.43, 12.65}, 4: {6.89, 6.82, 7.01, 6.96, 6.97}},
		"rfs+":     {1: {12.7, 12.6, 12.63}, 4: {6.96, 6.71, 6.85, 6.86, 6.83}},
		"rps":      {1: {16.88, 17.92, 16.54, 17.91, 18.12}, 4: {6.49, 6.48, 6.58}},
		"rps+":     {1: {12.63, 17.87, 13.66, 16.84, 13.46}, 4: {6.43, 6.63, 6.61}},
	}
	var samples []results.Sample
	for tn, byR := range trials {
		for r, xs := range byR {
			for i, x := range xs {
				c := results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: r}
				samples = append(samples, results.Sample{Cell: c, Trial: i + 1, Metrics: map[string]float64{results.MetricBitrate: x * 1e9}})
			}
		}
	}
	for i, x := range []float64{5, 9, 5.1} { // another workload: not pooled with tcp
		c := results.Cell{Datapath: "calico-vxlan", Tuning: "baseline", Workload: "udp", Replicas: 1}
		samples = append(samples, results.Sample{Cell: c, Trial: i + 1, Metrics: map[string]float64{results.MetricBitrate: x * 1e9}})
	}
	m := Build(nil, samples)
	var wide []string
	for _, r := range m.Rows {
		if r.Wide != nil {
			wide = append(wide, r.Tuning)
			if r.Replicas != 1 || r.Metric != results.MetricBitrate || r.CPU != -1 || len(r.Wide.Values) != 5 {
				t.Errorf("wide row %+v", r)
			}
		}
	}
	slices.Sort(wide)
	if !slices.Equal(wide, []string{"rps", "rps+"}) {
		t.Fatalf("wide rows of %v, want rps and rps+ at one pair", wide)
	}
	r := find(t, m.Rows, "rps+", 1, results.MetricBitrate, -1)
	if r.Wide.Values[1] != 17.87e9 || r.Wide.Spread < 0.13 {
		t.Errorf("rps+: %+v", *r.Wide)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b := find(t, got.Rows, "rps+", 1, results.MetricBitrate, -1)
	if b.Wide == nil || b.Wide.P != r.Wide.P || b.Wide.Others != r.Wide.Others || !slices.Equal(b.Wide.Values, r.Wide.Values) {
		t.Errorf("summary.json read back %+v, want %+v", b.Wide, r.Wide)
	}
}
