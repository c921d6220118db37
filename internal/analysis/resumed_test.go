package analysis

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// resumedAt puts each sample of drifting's run in the part a resume
// made, from trial cut on, for the rfs cell from trial cutRFS: the
// resume cut the rounds from cut to cutRFS−1, whose baseline trials
// ran before the kill and rfs trials after.
func resumedAt(samples []results.Sample, cut, cutRFS int) []results.Sample {
	out := slices.Clone(samples)
	for i, s := range out {
		from := cut
		if s.Cell.Tuning == "rfs" {
			from = cutRFS
		}
		if s.Trial >= from {
			out[i].Part = 1
		}
	}
	return out
}

// A round whose baseline trial counted before a kill and whose rfs
// trial ran after the --resume is no pair: the paired interval leaves
// it out (5 pairs of 6), the unpaired one keeps both its values, and the
// pair lists it (summary.json's apart_rounds), which Straddles reports.
// A resumed run whose resume fell between rounds pairs every round, as
// a run never resumed does.
func TestResumeCutRoundIsNoPair(t *testing.T) {
	s := quickStudy(t)
	whole := find(t, Summarize(s, drifting(6, 1.05)), "rfs", 1, results.MetricBitrate, -1).VsBaseline
	between := find(t, Summarize(s, resumedAt(drifting(6, 1.05), 4, 4)), "rfs", 1, results.MetricBitrate, -1).VsBaseline
	if between.Paired.N != 6 || between.Apart != nil || between.Paired.Ratio != whole.Paired.Ratio || between.Chosen != whole.Chosen {
		t.Errorf("resumed between rounds: %+v; want it as the run never resumed, %+v", between, whole)
	}
	rows := Summarize(s, resumedAt(drifting(6, 1.05), 4, 5))
	cut := find(t, rows, "rfs", 1, results.MetricBitrate, -1).VsBaseline
	if cut.Paired.N != 5 || !slices.Equal(cut.Apart, []int{4}) {
		t.Fatalf("round 4 cut: %d pairs, apart %v; want 5 pairs, round 4 apart", cut.Paired.N, cut.Apart)
	}
	var base, rfs, pb, px []float64
	for _, smp := range drifting(6, 1.05) {
		v := smp.Metrics[results.MetricBitrate]
		if smp.Cell.Tuning == "rfs" {
			rfs = append(rfs, v)
			if smp.Trial != 4 {
				px = append(px, v)
			}
		} else {
			base = append(base, v)
			if smp.Trial != 4 {
				pb = append(pb, v)
			}
		}
	}
	if want := stats.Ratio(rfs, base); cut.Unpaired.Ratio != want.Ratio || cut.Unpaired.Low != want.Low || cut.Unpaired.High != want.High {
		t.Errorf("round 4 cut: unpaired %+v, want Fieller's over all 6 trials of each, %+v", cut.Unpaired, want)
	}
	if want := stats.PairedRatio(px, pb); math.Abs(cut.Paired.Ratio-want.Ratio) > 1e-12 || math.Abs(cut.Paired.Low-want.Low) > 1e-12 {
		t.Errorf("round 4 cut: paired %+v, want the 5 other rounds' %+v", cut.Paired, want)
	}
	got := Straddles(rows)
	if len(got) != 1 || got[0].Cell.Tuning != "rfs" || got[0].Against != "baseline" || !slices.Equal(got[0].Rounds, []int{4}) {
		t.Errorf("straddles %+v, want rfs's round 4 against baseline, once", got)
	}
	b, err := json.Marshal(cut)
	if err != nil {
		t.Fatal(err)
	}
	var back Pair
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Apart, []int{4}) {
		t.Errorf("summary.json's pair %s read back apart %v (%v)", b, back.Apart, err)
	}
}

// Two cells compared by Between (advise --run's findings) leave the cut
// round out alike.
func TestResumeCutRoundBetween(t *testing.T) {
	samples := resumedAt(drifting(6, 1.05), 4, 5)
	a := results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}
	b := a
	b.Tuning = "baseline"
	p := Between(quickStudy(t), samples, a, b, results.MetricBitrate)
	if p == nil || p.Paired.N != 5 || !slices.Equal(p.Apart, []int{4}) {
		t.Errorf("Between: %+v, want 5 pairs, round 4 apart", p)
	}
}

// The rounds a paired interval left out are counted where summary.json
// and summary.csv show the pair (paired_incomplete): a round missing a
// side and a round a resume cut, each once, though the cut round has a
// value on both sides; a comparison that paired nothing (UnpairedOf)
// has an empty column.
func TestPairedIncompleteShown(t *testing.T) {
	s := quickStudy(t)
	var samples []results.Sample
	for _, smp := range resumedAt(drifting(6, 1.05), 4, 5) {
		if !(smp.Cell.Tuning == "rfs" && smp.Trial == 2) { // rfs lost its trial 2
			samples = append(samples, smp)
		}
	}
	rows := Summarize(s, samples)
	cut := find(t, rows, "rfs", 1, results.MetricBitrate, -1)
	if p := cut.VsBaseline; p.Paired.N != 4 || p.Paired.Incomplete != 2 || !slices.Equal(p.Apart, []int{4}) {
		t.Fatalf("round 2 missing, round 4 cut: %d pairs, %d incomplete, apart %v; want 4, 2, [4]", p.Paired.N, p.Paired.Incomplete, p.Apart)
	}
	b, err := json.Marshal(cut.VsBaseline)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Incomplete *int `json:"paired_incomplete"`
	}
	var back Pair
	if err := errors.Join(json.Unmarshal(b, &j), json.Unmarshal(b, &back)); err != nil || j.Incomplete == nil || *j.Incomplete != 2 || back.Paired.Incomplete != 2 {
		t.Errorf("summary.json's pair %s: paired_incomplete %v, read back %d (%v); want 2", b, j.Incomplete, back.Paired.Incomplete, err)
	}
	rec := csvRecord(t, rows, "rfs")
	if rec["paired_incomplete"] != "2" || rec["dp_paired_incomplete"] != "" {
		t.Errorf("summary.csv: paired_incomplete %q, dp_paired_incomplete %q; want 2 and empty (one datapath)", rec["paired_incomplete"], rec["dp_paired_incomplete"])
	}
	whole := csvRecord(t, Summarize(s, drifting(6, 1.05)), "rfs")
	if whole["paired_incomplete"] != "0" {
		t.Errorf("summary.csv of a run with every round complete: paired_incomplete %q, want 0", whole["paired_incomplete"])
	}
	un := UnpairedOf("host", map[int]float64{1: 9, 2: 9.1, 3: 8.9}, map[int]float64{1: 10, 2: 10.1, 3: 9.9}, 0.02, stats.HigherIsBetter)
	if got := incompleteCol(un); got != "" {
		t.Errorf("unpaired comparison: paired_incomplete %q, want empty", got)
	}
}
