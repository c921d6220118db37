package prove

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// rfsStops are the built-in rfs A/B's stops (replicas [1, 4]): B better
// by 1.2 at 1 pair, and at 4 pairs what b4 says.
func rfsStops(b4 results.Stop) []results.Stop {
	f := func(v float64) *float64 { return &v }
	cell := func(tn string, r int) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: r}
	}
	b4.Cell = cell("rfs", 4)
	return []results.Stop{
		{Cell: cell("baseline", 1), Metric: "bitrate", Status: "target", N: 5},
		{Cell: cell("rfs", 1), Metric: "bitrate", Status: "target", N: 5, Versus: "baseline", Decision: "better",
			Ratio: f(1.2), Low: f(1.1), High: f(1.3), Method: "paired-t", Confidence: 0.9875},
		{Cell: cell("baseline", 4), Metric: "bitrate", Status: "max", N: 4},
		b4,
	}
}

// A cell of B the runner gave up (its trials failed every attempt: the
// stop's Failed) is no undecided cell beside which a gain elsewhere is
// accepted: the candidate fails, the cell named with why, or is
// rejected where another cell is worse. It was "accepted: better ... at
// 1 pair(s), worse in none" beside "no interval, n=0, undecided".
func TestProofGivenUpCellIsNotAccepted(t *testing.T) {
	why := "trial 1 failed 3 attempts; last: iperf3: connection refused"
	gaveUp := results.Stop{Metric: "bitrate", Status: "failed", Versus: "baseline", Decision: "undecided",
		Reason: "given up: " + why, Failed: why}
	_, cs := cells(nil, analysis.Model{}, rfsStops(gaveUp), "baseline", "rfs", true, nil)
	if len(cs) != 2 || cs[1].GaveUp != why {
		t.Fatalf("cells %+v, want the 4-pair cell given up", cs)
	}
	v, vwhy := verdict(cs, 0.02)
	if v != advise.Failed || !strings.Contains(vwhy, "given up in tcp at 4 pair(s) ("+why+")") || !strings.Contains(vwhy, "not accepted") {
		t.Errorf("verdict %s: %s", v, vwhy)
	}
	p := &advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Margin: 0.02, Cells: cs}
	if got := measured(p); !strings.Contains(got, "tcp at 4 pair(s): no interval, n=0, undecided, given up: "+why) {
		t.Errorf("measured %q", got)
	}
	// Worse elsewhere: rejected, the given-up cell still named.
	cs[0].Decision = "worse"
	if v, vwhy := verdict(cs, 0.02); v != advise.Rejected || !strings.Contains(vwhy, "given up in tcp at 4 pair(s)") {
		t.Errorf("worse beside a given-up cell: %s: %s", v, vwhy)
	}
	// A's cell given up too: the cell says so, apart from B's why
	// (TestProofGivenUpOnBothSidesIsNotFailed).
	both := gaveUp
	both.VersusFailed = "its baseline calico-vxlan/tcp/baseline/r4 was given up (" + why + ")"
	_, cs = cells(nil, analysis.Model{}, rfsStops(both), "baseline", "rfs", true, nil)
	if !strings.Contains(cs[1].GaveUpA, "its baseline calico-vxlan/tcp/baseline/r4 was given up") {
		t.Errorf("both given up: %+v", cs[1])
	}
}

// B's cells of a block the budget never reached (no decision, stops.json
// "budget spent before this block") were dropped: the verdict read as if
// the A/B had one cell. They are named as not measured, in the measured
// text and the verdict's reason, and are not counted among the cells
// judged.
func TestProofNamesCellsNotMeasured(t *testing.T) {
	out := results.Stop{Metric: "bitrate", Status: "budget", Reason: "budget spent before this block", Failed: "budget spent before this block"}
	_, cs := cells(nil, analysis.Model{}, rfsStops(out), "baseline", "rfs", true, nil)
	if len(cs) != 2 || cs[1].NotMeasured == "" || cs[1].GaveUp != "" {
		t.Fatalf("cells %+v, want the 4-pair cell not measured", cs)
	}
	v, why := verdict(cs, 0.02)
	want := "better, by an estimate beyond 2%, in tcp at 1 pair(s) (1.200), worse in none; not measured, so not part of the verdict: tcp at 4 pair(s) (budget spent before this block)"
	if v != advise.Accepted || why != want {
		t.Errorf("verdict %s: %s\nwant %s", v, why, want)
	}
	p := &advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Margin: 0.02, Cells: cs}
	if got := measured(p); !strings.Contains(got, "; tcp at 4 pair(s): not measured (budget spent before this block)") {
		t.Errorf("measured %q", got)
	}
	if v, why := verdict(cs[1:], 0.02); v != advise.Undecided || !strings.Contains(why, "not measured") {
		t.Errorf("nothing measured: %s: %s", v, why)
	}
}

// groSamples are a datapath A/B's trials: gro-on's bitrate 20% above
// gro-off's in every round, at 4 pairs, for each tuning given.
func groSamples(tunings ...string) []results.Sample {
	var out []results.Sample
	for trial := 1; trial <= 5; trial++ {
		for _, tn := range tunings {
			for _, dp := range []string{"gro-off", "gro-on"} {
				g := 10e9 * (1 + 0.01*float64(trial%3))
				if dp == "gro-on" {
					g *= 1.2
				}
				out = append(out, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: tn, Workload: "tcp", Replicas: 4}, Trial: trial,
					Metrics: map[string]float64{results.MetricBitrate: g}})
			}
		}
	}
	return out
}

// A datapath A/B of a study of datapaths (nic-gro: one tuning) is decided
// by the runner against the first datapath, sequentially: its stops are
// its verdict, as a tuning A/B's are, not the summary's 95% over all
// trials, which called "better" a cell the run left undecided. A fixed
// design's stops decide at 95% on its count, and are read so too; a run
// without stops is read from the summary.
func TestDatapathProofReadsItsStops(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := &study.Study{Spec: study.Spec{
		Datapaths: []study.Datapath{{Name: "gro-off"}, {Name: "gro-on"}}, Tunings: []study.Tuning{{Name: "baseline"}}, Baseline: "baseline",
		Workloads: []study.Workload{{Name: "tcp", Tool: "iperf3", Protocol: "tcp"}}, Replicas: []int{4}}}
	m := analysis.Build(s, groSamples("baseline"))
	cell := results.Cell{Datapath: "gro-on", Tuning: "baseline", Workload: "tcp", Replicas: 4}
	stop := results.Stop{Cell: cell, Metric: "bitrate", Status: "futile", N: 5, Versus: "gro-off", Decision: "undecided",
		Ratio: f(1.2), Low: f(0.97), High: f(1.45), Method: "paired-t", Confidence: 0.9875, Reason: "futile after 5 trials"}
	_, cs := cells(s, m, []results.Stop{{Cell: results.Cell{Datapath: "gro-off", Tuning: "baseline", Workload: "tcp", Replicas: 4}, N: 5}, stop},
		"gro-off", "gro-on", false, nil)
	if len(cs) != 1 || cs[0].Decision != "undecided" || cs[0].Confidence != 0.9875 || cs[0].Stop != "futile after 5 trials" {
		t.Fatalf("cells %+v, want the stop's undecided at 98.75%%", cs)
	}
	if v, _ := verdict(cs, 0.02); v != advise.Undecided {
		t.Errorf("verdict %s, want undecided", v)
	}
	fixed := stop
	fixed.Decision, fixed.Confidence, fixed.Low, fixed.Status = "better", 0.95, f(1.1), "max"
	if _, cs := cells(s, m, []results.Stop{fixed}, "gro-off", "gro-on", false, nil); len(cs) != 1 || cs[0].Decision != "better" || cs[0].Confidence != 0.95 {
		t.Errorf("fixed design's stop: %+v", cs)
	}
	if _, cs := cells(s, m, nil, "gro-off", "gro-on", false, nil); len(cs) != 1 || cs[0].Decision != "better" {
		t.Errorf("no stops: %+v, want the summary's better", cs)
	}
}

// A datapath A/B on a study of several tunings with a baseline (--study
// rps-rfs under a datapath rule) has its stops decided against the
// baseline tuning, not against A: the summary's comparison with the
// first datapath is its reading. A cell of B given up is marked all the
// same.
func TestDatapathProofOnTuningStudyReadsTheSummary(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := &study.Study{Spec: study.Spec{
		Datapaths: []study.Datapath{{Name: "gro-off"}, {Name: "gro-on"}}, Tunings: []study.Tuning{{Name: "baseline"}, {Name: "rps"}}, Baseline: "baseline",
		Workloads: []study.Workload{{Name: "tcp", Tool: "iperf3", Protocol: "tcp"}}, Replicas: []int{4}}}
	m := analysis.Build(s, groSamples("baseline", "rps"))
	rps := results.Cell{Datapath: "gro-on", Tuning: "rps", Workload: "tcp", Replicas: 4}
	stops := []results.Stop{{Cell: rps, Metric: "bitrate", N: 5, Versus: "baseline", Decision: "worse", Ratio: f(0.5), Low: f(0.4), High: f(0.6)}}
	_, cs := cells(s, m, stops, "gro-off", "gro-on", false, nil)
	if len(cs) != 2 || cs[0].Decision != "better" || cs[1].Decision != "better" {
		t.Fatalf("cells %+v, want both tunings' cells better, from the summary", cs)
	}
	stops[0].Failed, stops[0].Status = "trial 6 failed 3 attempts; last: x", "failed"
	_, cs = cells(s, m, stops, "gro-off", "gro-on", false, nil)
	if len(cs) != 2 || cs[0].GaveUp != "" || cs[1].GaveUp == "" {
		t.Errorf("cells %+v, want rps's cell given up", cs)
	}
}
