package prove

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
)

const (
	whyB = "trial 1 failed 3 attempts; last: iperf3: connection refused"
	whyA = "trial 1 failed 3 attempts; last: iperf3: no route to host"
)

// A cell given up on both sides (A's trials failed every attempt there
// as B's did) is the machine's or the workload's failure: the candidate
// was "failed" for it, its reason naming the cell as if B had broken it.
// Alone it is not measured, each side's error named; beside judged
// cells it is not part of the verdict; beside a cell B alone lost the
// candidate still fails.
func TestProofGivenUpOnBothSidesIsNotFailed(t *testing.T) {
	gaveUp := results.Stop{Metric: "bitrate", Status: "failed", Versus: "baseline", Decision: "undecided",
		Reason: "given up: " + whyB, Failed: whyB}
	stops := rfsStops(gaveUp)
	stops[2].Status, stops[2].Failed = "failed", whyA // baseline at 4 pairs
	_, cs := cells(nil, analysis.Model{}, stops, "baseline", "rfs", true, nil)
	if len(cs) != 2 || cs[1].GaveUp != whyB || cs[1].GaveUpA != whyA {
		t.Fatalf("cells %+v, want the 4-pair cell given up on both sides", cs)
	}
	named := "given up with A as with B in tcp at 4 pair(s) (B: " + whyB + "; A too: " + whyA + ")"

	v, why := verdict(cs[1:], 0.02)
	if v != advise.Unmeasured || !strings.HasPrefix(why, named+": ") || !strings.Contains(why, "says nothing of the candidate") {
		t.Errorf("alone: %s: %s\nwant %s: %s: ...", v, why, advise.Unmeasured, named)
	}
	v, why = verdict(cs, 0.02)
	want := "better, by an estimate beyond 2%, in tcp at 1 pair(s) (1.200), worse in none; " + named + ", so not part of the verdict"
	if v != advise.Accepted || why != want {
		t.Errorf("beside a gain: %s: %s\nwant accepted: %s", v, why, want)
	}
	p := &advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Margin: 0.02, Cells: cs}
	if got := measured(p); !strings.Contains(got, "tcp at 4 pair(s): no interval, n=0, undecided, given up: "+whyB+"; A's cell too: "+whyA) {
		t.Errorf("measured %q", got)
	}
	// B alone given up in another cell: that is the candidate's failure.
	lone := advise.ProofCell{Workload: "udp", Replicas: 1, Metric: "bitrate", Decision: "undecided", GaveUp: whyB}
	if v, why := verdict([]advise.ProofCell{lone, cs[1]}, 0.02); v != advise.Failed || !strings.Contains(why, "given up in udp at 1 pair(s)") || !strings.Contains(why, named) {
		t.Errorf("beside a cell B alone lost: %s: %s", v, why)
	}
	// The runner's own word that A was given up (VersusFailed), where
	// A's stop is not at hand, says so too.
	both := gaveUp
	both.VersusFailed = "its baseline calico-vxlan/tcp/baseline/r4 was given up (" + whyA + ")"
	_, cs = cells(nil, analysis.Model{}, rfsStops(both), "baseline", "rfs", true, nil)
	if cs[1].GaveUp != whyB || !strings.Contains(cs[1].GaveUpA, whyA) {
		t.Errorf("versus failed: %+v", cs[1])
	}
}

// A datapath A/B finds A's cell on A's datapath; on a study of tunings
// the cell B was decided against is its own baseline tuning, not A's:
// that one given up stays in B's reason and does not spare B.
func TestDatapathProofGivenUpOnBothSides(t *testing.T) {
	cell := func(dp, tn string) results.Cell {
		return results.Cell{Datapath: dp, Tuning: tn, Workload: "tcp", Replicas: 4}
	}
	failed := func(c results.Cell, why string) results.Stop {
		return results.Stop{Cell: c, Metric: "bitrate", Status: "failed", N: 1, Failed: why}
	}
	stops := []results.Stop{failed(cell("gro-off", "baseline"), whyA), failed(cell("gro-on", "baseline"), whyB)}
	if _, cs := cells(nil, analysis.Model{}, stops, "gro-off", "gro-on", false, nil); len(cs) != 1 || cs[0].GaveUpA != whyA {
		t.Errorf("datapath A/B: %+v, want A's datapath's cell given up too", cs)
	}
	rps := failed(cell("gro-on", "rps"), whyB)
	rps.Versus, rps.VersusFailed = "baseline", "its baseline gro-on/tcp/baseline/r4 was given up ("+whyB+")"
	_, cs := cells(nil, analysis.Model{}, []results.Stop{rps}, "gro-off", "gro-on", false, nil)
	if len(cs) != 1 || cs[0].GaveUpA != "" || !strings.Contains(cs[0].GaveUp, "its baseline gro-on/tcp/baseline/r4") {
		t.Fatalf("tuning study: %+v, want B's own baseline in its reason", cs)
	}
	if v, _ := verdict(cs, 0.02); v != advise.Failed {
		t.Errorf("tuning study: verdict %s, want failed", v)
	}
}

// An A/B whose every cell was given up on both sides measured nothing:
// the runner ends it with ErrNothingMeasured, and the candidate was
// "failed: the A/B run failed". Its stops say A failed as B did: not
// measured, the run's error beside it. One that measured nothing for
// want of budget is still a failed run.
func TestCandidateNothingMeasuredOnBothSides(t *testing.T) {
	for _, status := range []string{"failed", "budget"} {
		e, in, resolve, _ := rfsHere(t)
		runStudy = func(_ context.Context, o runner.Options) (string, error) {
			writeGivenUpRun(t, o.OutDir, o.Study, status)
			return o.OutDir, runner.ErrNothingMeasured
		}
		t.Cleanup(func() { runStudy = runner.Run })
		err := Candidate(context.Background(), Options{Resolve: resolve, Budget: time.Minute, OutDir: t.TempDir(), JournalDir: t.TempDir(), MachineLocked: true}, e, in)
		if !errors.Is(err, runner.ErrNothingMeasured) || e.Proof == nil || e.Proof.Error == "" {
			t.Fatalf("%s: err %v, proof %+v, want the run's error kept", status, err, e.Proof)
		}
		switch {
		case status == "failed" && (e.Verdict != advise.Unmeasured || !strings.Contains(e.VerdictWhy, "given up with A as with B in tcp at 1 pair(s)")):
			t.Errorf("given up: verdict %q: %q", e.Verdict, e.VerdictWhy)
		case status == "budget" && (e.Verdict != advise.Failed || !strings.Contains(e.Measured, "the A/B run failed")):
			t.Errorf("budget: verdict %q, measured %q", e.Verdict, e.Measured)
		}
	}
}

// writeGivenUpRun writes a run directory of s with no trial and every
// cell stopped with status: failed (given up, each side's why) or
// budget (never reached).
func writeGivenUpRun(t *testing.T, dir string, s *study.Study, status string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var stops []results.Stop
	for _, c := range s.Cells() {
		why := whyA
		if c.Tuning != s.Spec.Tunings[0].Name {
			why = whyB
		}
		if status == "budget" {
			why = "budget spent before this block"
		}
		stops = append(stops, results.Stop{Cell: c, Metric: "bitrate", Status: status, N: 1, Reason: why, Failed: why})
	}
	b, err := json.Marshal(stops)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{results.StudyFile: y, results.SamplesFile: nil, results.StopsFile: b} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
