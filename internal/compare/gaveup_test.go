package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// attempt is a failed attempt at a trial of bridge/TUNING/tcp/r=1, as the
// runner records it (results.Run.Marked).
func attempt(tuning string, trial, n int) results.Sample {
	return results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}, Trial: trial, Attempt: n,
		Metrics: map[string]float64{}, Error: "iperf3: connection refused", Discarded: "failed"}
}

// trialOf is a counted trial of bridge/TUNING/tcp/r=1 with the given
// metrics.
func trialOf(tuning string, trial int, metrics map[string]float64) results.Sample {
	return results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: tuning, Workload: "tcp", Replicas: 1}, Trial: trial, Metrics: metrics}
}

func bitrate(v float64) map[string]float64 { return map[string]float64{results.MetricBitrate: v} }

// TestGaveUpMarked: a cell whose trial 2 failed every attempt after a
// counted trial 1 is marked given up with the runner's reason, from
// stops.json's failed where the run wrote one and from its attempts
// where it did not (a fixed design); a trial that failed twice and then
// counted is no give-up. The table and the JSON say so.
func TestGaveUpMarked(t *testing.T) {
	var a []results.Sample
	for i := 1; i <= 5; i++ {
		a = append(a, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, bitrate(12e9)))
	}
	b := &results.Run{
		Samples: []results.Sample{trialOf("baseline", 1, bitrate(10e9)), trialOf("rfs", 1, bitrate(12e9)), trialOf("rfs", 2, bitrate(12e9))},
		Marked:  []results.Sample{attempt("baseline", 2, 1), attempt("baseline", 2, 2), attempt("baseline", 2, 3), attempt("rfs", 2, 1), attempt("rfs", 2, 2)},
	}
	const why = "trial 2 failed 3 attempts; last: iperf3: connection refused"
	rows := Runs(counted(a), b, []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 2 || rows[0].GaveUp != why || rows[0].Missing || rows[1].GaveUp != "" {
		t.Fatalf("rows %+v, want baseline given up (%q) with its one trial, rfs not", rows, why)
	}
	b.Stops = []results.Stop{{Cell: b.Samples[0].Cell, Metric: results.MetricBitrate, Status: "failed", Failed: "trial 2 failed 3 attempts; last: timeout"}}
	rows = Runs(counted(a), b, []string{results.MetricBitrate}, nil, nil, nil)
	if rows[0].GaveUp != "trial 2 failed 3 attempts; last: timeout" {
		t.Errorf("stops.json's reason not taken: %q", rows[0].GaveUp)
	}
	// A cell the budget did not reach was not given up: nothing failed.
	skipped := &results.Run{Samples: b.Samples, Stops: []results.Stop{{Cell: b.Samples[1].Cell, Metric: results.MetricBitrate,
		Status: "budget", Failed: "budget spent before this block"}}}
	for _, r := range Runs(counted(a), skipped, []string{results.MetricBitrate}, nil, nil, nil) {
		if r.GaveUp != "" || r.Missing {
			t.Errorf("a cell the budget did not reach taken for given up: %+v", r)
		}
	}
	var md, js bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "; B gave the cell up (trial 2 failed 3 attempts; last: timeout) |") {
		t.Errorf("the table does not say B gave the cell up:\n%s", md.String())
	}
	if err := Write(&js, "json", Head{}, rows, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			GaveUp string `json:"gave_up_b"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Rows[0].GaveUp == "" || doc.Rows[1].GaveUp != "" {
		t.Errorf("JSON gave_up_b: %+v %v", doc, err)
	}
}

// TestMissingNeedsNoCountedTrial: a cell is missing in B only when B has
// no counted trial of it. A failed attempt of a cell whose counted
// trials lack a metric (B measured it elsewhere) leaves the metric "not
// measured in B", not missing (which fails the gate); a metric B has
// nowhere is no row; a cell whose every attempt failed is missing.
func TestMissingNeedsNoCountedTrial(t *testing.T) {
	both := func(v float64) map[string]float64 {
		return map[string]float64{results.MetricBitrate: v, "retransmits": 1}
	}
	a := []results.Sample{trialOf("baseline", 1, both(10e9)), trialOf("baseline", 2, both(10e9)), trialOf("rfs", 1, both(12e9)),
		trialOf("rfs", 2, both(12e9)), trialOf("rps", 1, both(11e9)), trialOf("rps", 2, both(11e9))}
	retx := map[string]float64{"retransmits": 2}
	b := &results.Run{
		Samples: []results.Sample{trialOf("baseline", 1, both(10e9)), trialOf("baseline", 2, both(10e9)), trialOf("rfs", 1, retx), trialOf("rfs", 3, retx)},
		Marked:  []results.Sample{attempt("rfs", 2, 1), attempt("rps", 1, 1), attempt("rps", 1, 2), attempt("rps", 1, 3)},
	}
	rows := Runs(counted(a), b, []string{results.MetricBitrate}, nil, nil, nil)
	got := map[string]Row{}
	for _, r := range rows {
		got[r.Key] = r
	}
	if r := got["bridge/rfs/tcp/r=1"]; len(rows) != 3 || r.Missing || !r.NotMeasured || r.GaveUp != "" {
		t.Errorf("rfs, counted in B without bitrate, one failed attempt: %+v (of %d rows), want not measured, not missing", r, len(rows))
	}
	if r := got["bridge/rps/tcp/r=1"]; !r.Missing || r.NotMeasured || r.GaveUp == "" {
		t.Errorf("rps, every attempt failed in B: %+v, want missing and given up", r)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, Head{A: "a", B: "b"}, rows); err != nil || !strings.Contains(md.String(), "not measured in B (its trials of the cell have no value of bitrate)") ||
		!strings.Contains(md.String(), "missing: B gave the cell up (trial 1 failed 3 attempts") {
		t.Errorf("table (%v):\n%s", err, md.String())
	}
	b.Samples = []results.Sample{trialOf("baseline", 1, retx), trialOf("rfs", 1, retx)}
	if rows := Runs(counted(a), b, []string{results.MetricBitrate}, nil, nil, nil); len(rows) != 1 || !rows[0].Missing {
		t.Errorf("B measured bitrate nowhere: rows %+v, want rps (missing) alone", rows)
	}
}

// TestGaveUpAtSetUp: a cell B's runner gave up because its datapath's
// cluster or its pods could not be set up (one results.SetUpFailed
// record, in a run without stops.json) is given up as a cell whose trial
// failed every attempt is, with the record's why: missing where it
// counted no trial, given up after the trials it counted.
func TestGaveUpAtSetUp(t *testing.T) {
	var a []results.Sample
	for i := 1; i <= 3; i++ {
		a = append(a, trialOf("baseline", i, bitrate(10e9)), trialOf("rfs", i, bitrate(12e9)))
	}
	why := results.GaveUpAtSetUp(2, 2, "build cluster for bridge: operation not supported")
	lost := func(tuning string, trial int) results.Sample {
		s := attempt(tuning, trial, 1)
		s.Error, s.Discarded = why, results.SetUpFailed
		return s
	}
	b := &results.Run{Samples: []results.Sample{trialOf("baseline", 1, bitrate(10e9))},
		Marked: []results.Sample{lost("baseline", 2), lost("rfs", 1)}}
	rows := Runs(counted(a), b, []string{results.MetricBitrate}, nil, nil, nil)
	if len(rows) != 2 || rows[0].GaveUp != why || rows[0].Missing || rows[1].GaveUp != why || !rows[1].Missing {
		t.Errorf("rows %+v; want baseline given up after its one trial and rfs missing, both with %q", rows, why)
	}
}
