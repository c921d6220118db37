package prove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/runner"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

func TestVerdict(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cell := func(dec string, ratio float64) advise.ProofCell {
		return advise.ProofCell{Decision: dec, Ratio: f(ratio)}
	}
	for _, c := range []struct {
		cells []advise.ProofCell
		want  string
	}{
		{[]advise.ProofCell{cell("better", 1.08), cell("equal", 1.01)}, advise.Accepted},
		{[]advise.ProofCell{cell("better", 1.015)}, advise.Rejected}, // significant, not beyond the 2% margin
		{[]advise.ProofCell{cell("better", 1.2), cell("worse", 0.9)}, advise.Rejected},
		{[]advise.ProofCell{cell("equal", 1.0), cell("undecided", 1.1)}, advise.Rejected},
		{[]advise.ProofCell{cell("undecided", 1.1), cell("undecided", 0.9)}, advise.Undecided},
		{nil, advise.Undecided},
	} {
		if got, _ := verdict(c.cells, 0.02); got != c.want {
			t.Errorf("%+v: %s, want %s", c.cells, got, c.want)
		}
	}
	// Latency: better is a ratio below 1, beyond the margin below
	// 1/1.02.
	lat := func(dec string, ratio float64) advise.ProofCell {
		return advise.ProofCell{Metric: "rtt_p99_us", Decision: dec, Ratio: f(ratio)}
	}
	for _, c := range []struct {
		cells []advise.ProofCell
		want  string
	}{
		{[]advise.ProofCell{lat("better", 0.80)}, advise.Accepted},
		{[]advise.ProofCell{lat("better", 0.99)}, advise.Rejected},
		{[]advise.ProofCell{lat("worse", 1.2)}, advise.Rejected},
	} {
		if got, _ := verdict(c.cells, 0.02); got != c.want {
			t.Errorf("latency %+v: %s, want %s", c.cells, got, c.want)
		}
	}
	// The reason names the cells: a trade-off reads as one.
	at := func(dec string, ratio float64, pairs int) advise.ProofCell {
		return advise.ProofCell{Workload: "tcp", Replicas: pairs, Decision: dec, Ratio: f(ratio)}
	}
	for _, c := range []struct {
		cells []advise.ProofCell
		why   string
	}{
		{[]advise.ProofCell{at("better", 1.135, 1), at("worse", 0.961, 4)},
			"worse in tcp at 4 pair(s) (0.961), though better in tcp at 1 pair(s) (1.135): a trade-off, not a gain"},
		{[]advise.ProofCell{at("better", 1.08, 1), at("undecided", 1.01, 4)}, "better, by an estimate beyond 2%, in tcp at 1 pair(s) (1.080), worse in none (2 cells, each judged alone: a change without effect passes at most 5.0% of the time)"},
		{[]advise.ProofCell{at("equal", 1.001, 1), at("better", 1.012, 4)},
			"equal within ±2% in tcp at 1 pair(s) (1.001); better by less than 2% in tcp at 4 pair(s) (1.012): no gain worth the change"},
		{[]advise.ProofCell{at("better", 1.08, 1)}, "better, by an estimate beyond 2%, in tcp at 1 pair(s) (1.080), worse in none"},
		{[]advise.ProofCell{at("undecided", 1.1, 1)}, "no cell decided within the budget"},
	} {
		if _, why := verdict(c.cells, 0.02); why != c.why {
			t.Errorf("why %q\nwant %q", why, c.why)
		}
	}
	p := &advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Margin: 0.02,
		Cells: []advise.ProofCell{{Workload: "tcp", Replicas: 4, N: 6, Ratio: f(0.9), Low: f(0.85), High: f(0.95), Method: "paired-t", Confidence: 0.9875, Decision: "worse"}}}
	if got := measured(p); !strings.Contains(got, "rfs/baseline") || !strings.Contains(got, "0.900 [0.850, 0.950] paired-t 98.75%, n=6, worse") {
		t.Errorf("measured %q", got)
	}
}

// The built-in A/B study is valid as it is, adaptive, and needs two
// tunings or datapaths from the rule.
func TestDefaultStudy(t *testing.T) {
	if !strings.Contains(string(DefaultStudy), "trials: {min: 3, max: 10}") {
		t.Error("the default A/B is not adaptive")
	}
	s := &study.Study{Spec: study.Spec{Tunings: []study.Tuning{{Name: "baseline"}}, Datapaths: []study.Datapath{{Name: "x"}}}}
	for _, dp := range []bool{false, true} {
		if _, _, err := sides(s, dp); err == nil {
			t.Errorf("one tuning and one datapath (datapath A/B %v): want an error, there is no A/B", dp)
		}
	}
	s.Spec.Datapaths = append(s.Spec.Datapaths, study.Datapath{Name: "y"})
	if a, b, err := sides(s, true); err != nil || a != "x" || b != "y" {
		t.Errorf("sides %s %s %v", a, b, err)
	}
	// A datapath rule over a study with several tunings (--study rps-rfs)
	// compares the datapaths, not the tunings.
	s.Spec.Tunings = append(s.Spec.Tunings, study.Tuning{Name: "rps"})
	if a, b, err := sides(s, true); err != nil || a != "x" || b != "y" {
		t.Errorf("datapath A/B with two tunings: sides %s %s %v, want x y", a, b, err)
	}
	if a, b, err := sides(s, false); err != nil || a != "baseline" || b != "rps" {
		t.Errorf("tuning A/B: sides %s %s %v", a, b, err)
	}
}

// An undecided A/B's rerun: the candidate alone, the user's study and
// overrides kept, the trial maximum that decides its estimated cells,
// and a budget that covers their trials with room for set-up.
func TestRerun(t *testing.T) {
	cell := func(tuning string, r int) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tuning, Workload: "tcp", Replicas: r}
	}
	stops := []results.Stop{
		{Cell: cell("baseline", 1), N: 5, TrialSeconds: 6},
		{Cell: cell("rfs", 1), N: 5, TrialSeconds: 6, Decision: "undecided", Versus: "baseline", ToDecide: 14},
		{Cell: cell("baseline", 4), N: 5, TrialSeconds: 6},
		{Cell: cell("rfs", 4), N: 5, TrialSeconds: 6, Decision: "undecided", Versus: "baseline"}, // no estimate
	}
	s := &study.Study{Spec: study.Spec{Trials: study.Trials{Min: 3, Max: 10}}}
	r := rerun(Options{Study: "my study.yaml", Sets: []string{"replicas=[1,4]"}}, "rfs", s, stops)
	if r == nil {
		t.Fatal("no rerun")
	}
	want := "--rule rfs --study my study.yaml --set replicas=[1,4] --set trials.max=14 --budget 8m"
	if got := strings.Join(r.Args, " "); got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	// rfs and baseline at 1 pair run 14, at 4 pairs 14 too (no estimate:
	// up to the maximum): 56 trials of 6 s.
	if r.Cells != 1 || r.Undecided != 2 || r.Seconds != 336 {
		t.Errorf("rerun %+v, want 1 of 2 cells in 336 s", r)
	}
	if fixed := rerun(Options{}, "rfs", &study.Study{Spec: study.Spec{Trials: study.Trials{Min: 5, Max: 5}}}, stops); fixed == nil ||
		!strings.Contains(strings.Join(fixed.Args, " "), "--set trials=14") {
		t.Errorf("fixed design's rerun %+v: want --set trials=14", fixed)
	}
	if rerun(Options{}, "rfs", s, stops[2:]) != nil {
		t.Error("a rerun without any estimate")
	}
	// Decided at 1 pair, undecided at 4: the rerun runs 4 pairs only, in
	// place of the user's replica counts, and is costed so.
	ab, err := study.Parse("ab", DefaultStudy, study.Options{Set: []string{"replicas=[1,4]", "tunings=[baseline, rfs]"}}, study.Catalog{Datapaths: []string{"calico-vxlan"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	at4 := slices.Clone(stops)
	at4[1].Decision, at4[3].ToDecide = "better", 14
	r = rerun(Options{Sets: []string{"replicas=[1,4]"}}, "rfs", ab, at4)
	if got := strings.Join(r.Args, " "); r.Seconds != 2*14*6 || !strings.HasPrefix(got, "--rule rfs --set replicas=[4] --set trials.max=14") {
		t.Errorf("rerun of 4 pairs: %s in %v s", got, r.Seconds)
	}
	// On a cluster the rerun reaches the same cluster: the user's cluster
	// flags come along.
	kube := rerun(Options{Engine: "kube", ClusterArgs: []string{"--kubeconfig", "/k", "--server-node", "w1"}}, "rfs", s, stops)
	if got := strings.Join(kube.Args, " "); !strings.HasPrefix(got, "--rule rfs --engine kube --kubeconfig /k --server-node w1 --set trials.max=14") {
		t.Errorf("cluster rerun: %s", got)
	}
	// The A/B run records the command that proves its candidate alone,
	// with its share of the budget.
	o := origin(Options{Study: "/s.yaml", Sets: []string{"replicas=[1]"}, Budget: 150 * time.Second}, "rfs")
	if got := strings.Join(o, " "); got != "cnibench advise --prove --rule rfs --study /s.yaml --set replicas=[1] --budget 2m30s" {
		t.Errorf("origin %s", got)
	}
}

// A request/response A/B is judged on transactions per second; its
// latencies come beside the verdict, each in its own direction, and the
// measured text says they are not part of it.
func TestAlsoLatencies(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline", Tunings: []study.Tuning{{Name: "baseline"}, {Name: "busy-poll"}}}}
	run := &results.Run{}
	for trial := 1; trial <= 4; trial++ {
		for _, tn := range []string{"baseline", "busy-poll"} {
			g := 1 + 0.001*float64(trial%2)
			if tn == "busy-poll" {
				g *= 0.8 // a fifth less latency in every round
			}
			run.Samples = append(run.Samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "rr", Replicas: 1}, Trial: trial,
				Metrics: map[string]float64{results.MetricTransactions: 30000 / g * (1 + 0.02*float64(trial)), "rtt_p99_us": 50 * g * (1 + 0.05*float64(trial)), "rtt_max_us": 900}})
		}
	}
	m := analysis.Build(s, run.Samples)
	metric, cs := cells(s, m, run.Stops, "baseline", "busy-poll", true, nil)
	p := &advise.Proof{A: "baseline", B: "busy-poll", Metric: metric, Cells: cs, Also: also(s, m, "busy-poll", true)}
	if metric != results.MetricTransactions || len(cs) != 1 || cs[0].Decision != "better" {
		t.Fatalf("verdict cells %s %+v, want transactions better", metric, cs)
	}
	if len(p.Also) != 1 || p.Also[0].Metric != "rtt_p99_us" || p.Also[0].Cells[0].Decision != "better" || *p.Also[0].Cells[0].Ratio > 0.81 {
		t.Fatalf("also %+v, want rtt_p99_us better at 0.8", p.Also)
	}
	if txt := measured(p); !strings.Contains(txt, ". Besides the verdict, over all trials at 95%: rtt_p99_us rr at 1 pair(s): 0.800 [") {
		t.Errorf("measured %q", txt)
	}
}

// TestCellsApart: an A/B of tunings on a run's own study of two
// datapaths names each cell's datapath (both would read "http at 1
// pair(s)" otherwise); the built-in A/B of one datapath names none.
func TestCellsApart(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	stop := func(dp string, ratio float64) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: dp, Tuning: "rfs-underlay", Workload: "http", Replicas: 1}, Metric: "requests_per_s",
			N: 3, Decision: "better", Ratio: f(ratio), Low: f(ratio - 0.1), High: f(ratio + 0.1), Method: "paired-t", Confidence: 0.95}
	}
	_, cs := cells(nil, analysis.Model{}, []results.Stop{stop("flannel", 2.07), stop("bridge", 2.42)}, "baseline", "rfs-underlay", true, nil)
	p := &advise.Proof{A: "baseline", B: "rfs-underlay", Metric: "requests_per_s", Cells: cs}
	if got := measured(p); !strings.Contains(got, "flannel http at 1 pair(s): 2.070") || !strings.Contains(got, "bridge http at 1 pair(s): 2.420") {
		t.Errorf("two datapaths' cells: %s", got)
	}
	if v, why := verdict(cs, 0.02); v != advise.Accepted || !strings.Contains(why, "flannel http at 1 pair(s) (2.070)") {
		t.Errorf("verdict %s: %s", v, why)
	}
	_, cs = cells(nil, analysis.Model{}, []results.Stop{stop("calico-vxlan", 1.2)}, "baseline", "rfs-underlay", true, nil)
	if got := cellText(cs[0]); !strings.HasPrefix(got, "http at 1 pair(s): 1.200") {
		t.Errorf("one datapath's cell: %s", got)
	}
}

// A proof's cell says how many of its trials, and of A's, counted though
// disturbed; a quiet cell says nothing of it.
func TestProofNamesDisturbedTrials(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cell := func(tn string, reps int) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: reps}
	}
	stops := []results.Stop{
		{Cell: cell("rfs", 1), Metric: "bitrate", N: 4, Decision: "undecided", Ratio: f(1.02), Low: f(0.8), High: f(1.3), Method: "paired-t", Confidence: 0.9875},
		{Cell: cell("rfs", 4), Metric: "bitrate", N: 5, Decision: "better", Ratio: f(1.2), Low: f(1.1), High: f(1.3), Method: "paired-t", Confidence: 0.9875},
	}
	disturbed := map[results.Cell]int{cell("rfs", 1): 2, cell("baseline", 1): 1, cell("rfs+", 4): 3}
	_, cs := cells(nil, analysis.Model{}, stops, "baseline", "rfs", true, disturbed)
	if len(cs) != 2 || cs[0].Disturbed != 2 || cs[0].DisturbedA != 1 || cs[1].Disturbed != 0 || cs[1].DisturbedA != 0 {
		t.Fatalf("cells %+v", cs)
	}
	txt := measured(&advise.Proof{A: "baseline", B: "rfs", Metric: "bitrate", Cells: cs, Margin: 0.05})
	if !strings.Contains(txt, "n=4, undecided (2 of its trials and 1 of baseline's counted though disturbed); tcp at 4 pair(s): 1.200 [1.100, 1.300] paired-t 98.75%, n=5, better") {
		t.Errorf("measured %q", txt)
	}
}

// The built-in A/B's trial maximum grows with the budget, but no further
// than a study may give (study.MaxTrials): the A/B's study.yaml is read
// back by a resumed run and a rerun, and a maximum of 1200 did not parse.
func TestPlanCapsTrialsAtStudyMax(t *testing.T) {
	e, in, resolve, cat := rfsHere(t)
	for _, c := range []struct {
		budget time.Duration
		max    int
	}{
		{30 * time.Minute, 75},             // 4 cells of 6 s: 75 trials each
		{8 * time.Hour, study.MaxTrials},   // 1200 afforded, 1000 allowed
		{100 * time.Hour, study.MaxTrials}, // 15000 afforded
	} {
		s, _, err := Plan(Options{Resolve: resolve, Budget: c.budget}, e, in)
		if err != nil {
			t.Fatal(err)
		}
		if s.Spec.Trials.Max != c.max {
			t.Errorf("budget %s: trials.max %d, want %d", c.budget, s.Spec.Trials.Max, c.max)
		}
		y, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := study.Parse("study.yaml", y, study.Options{}, cat)
		if err != nil {
			t.Errorf("budget %s: the planned study does not parse back: %v", c.budget, err)
			continue
		}
		if back.Spec.Trials != s.Spec.Trials || back.Spec.Budget != s.Spec.Budget || len(back.Spec.Tunings) != 2 {
			t.Errorf("budget %s: parsed back as trials %+v budget %s tunings %d, planned %+v %s",
				c.budget, back.Spec.Trials, back.Spec.Budget.Duration, len(back.Spec.Tunings), s.Spec.Trials, s.Spec.Budget.Duration)
		}
	}
}

// A study mixing directions: pod start-up decided on startup_ms (lower
// is better) beside iperf3 on bitrate. Each cell carries its metric and
// is judged in its direction: start-up at half the time is a gain, not
// "better by less than 2%", and a bitrate gain is one whatever metric
// the last cell has. The measured text and the reasons name each cell's
// metric, and advice.json's cells hold it.
func TestVerdictEachCellInItsDirection(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	stop := func(workload, metric, dec string, ratio float64) results.Stop {
		return results.Stop{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: "cand", Workload: workload, Replicas: 1}, Metric: metric,
			N: 5, Decision: dec, Ratio: f(ratio), Low: f(ratio - 0.05), High: f(ratio + 0.05), Method: "paired-t", Confidence: 0.9875}
	}
	for _, c := range []struct {
		stops      []results.Stop
		metric     string
		want, why  string
		measuredAs string
	}{
		{[]results.Stop{stop("startup", "startup_ms", "better", 0.5), stop("tcp", "bitrate", "equal", 1.0)},
			"startup_ms, bitrate", advise.Accepted, "better, by an estimate beyond 2%, in startup_ms startup at 1 pair(s) (0.500), worse in none (2 cells, each judged alone: a change without effect passes at most 5.0% of the time)",
			"cand/baseline (margin ±2%): startup_ms startup at 1 pair(s): 0.500 [0.450, 0.550] paired-t 98.75%, n=5, better; bitrate tcp at 1 pair(s): 1.000"},
		{[]results.Stop{stop("tcp", "bitrate", "better", 1.2), stop("startup", "startup_ms", "equal", 1.0)},
			"bitrate, startup_ms", advise.Accepted, "better, by an estimate beyond 2%, in bitrate tcp at 1 pair(s) (1.200), worse in none (2 cells, each judged alone: a change without effect passes at most 5.0% of the time)",
			"cand/baseline (margin ±2%): bitrate tcp at 1 pair(s): 1.200"},
		{[]results.Stop{stop("startup", "startup_ms", "better", 0.99), stop("tcp", "bitrate", "better", 1.01)},
			"startup_ms, bitrate", advise.Rejected, "better by less than 2% in startup_ms startup at 1 pair(s) (0.990), bitrate tcp at 1 pair(s) (1.010): no gain worth the change",
			"; bitrate tcp at 1 pair(s): 1.010"},
		{[]results.Stop{stop("startup", "startup_ms", "better", 0.5), stop("startup", "startup_ms", "equal", 1.0)},
			"startup_ms", advise.Accepted, "better, by an estimate beyond 2%, in startup at 1 pair(s) (0.500), worse in none (2 cells, each judged alone: a change without effect passes at most 5.0% of the time)",
			"startup_ms cand/baseline (margin ±2%): startup at 1 pair(s): 0.500"},
	} {
		metric, cs := cells(nil, analysis.Model{}, c.stops, "baseline", "cand", true, nil)
		if metric != c.metric || len(cs) != 2 || cs[0].Metric != c.stops[0].Metric || cs[1].Metric != c.stops[1].Metric {
			t.Errorf("cells on %q %+v, want %q and each stop's metric", metric, cs, c.metric)
		}
		if v, why := verdict(cs, 0.02); v != c.want || why != c.why {
			t.Errorf("%s: %s: %s\nwant %s: %s", metric, v, why, c.want, c.why)
		}
		if got := measured(&advise.Proof{A: "baseline", B: "cand", Metric: metric, Margin: 0.02, Cells: cs}); !strings.Contains(got, c.measuredAs) {
			t.Errorf("measured %q\nwant it to hold %q", got, c.measuredAs)
		}
	}
	_, cs := cells(nil, analysis.Model{}, []results.Stop{stop("startup", "startup_ms", "better", 0.5)}, "baseline", "cand", true, nil)
	b, err := json.Marshal(cs[0])
	if err != nil || !strings.Contains(string(b), `"metric":"startup_ms"`) {
		t.Errorf("advice.json's cell %s (%v): want its metric", b, err)
	}
	var old advise.ProofCell // an advice.json written before cells had a metric
	if err := json.Unmarshal([]byte(`{"workload":"tcp","replicas":1,"n":3,"ratio":1.1,"decision":"better"}`), &old); err != nil || old.Metric != "" || old.N != 3 {
		t.Errorf("an older cell: %+v %v", old, err)
	}
}

// A datapath A/B is read from the summary, where iperf3 writes bitrate
// and bitrate_sum (the pairs' sum, 4x at 4 pairs): each cell enters the
// proof once, on the metric it is decided on (the workload's, or the
// precision target's), not once per normalized metric.
func TestCellsOnePerCellOnItsDecidedMetric(t *testing.T) {
	s := &study.Study{Spec: study.Spec{
		Datapaths: []study.Datapath{{Name: "gro-off"}, {Name: "gro-on"}}, Tunings: []study.Tuning{{Name: "baseline"}}, Baseline: "baseline",
		Workloads: []study.Workload{{Name: "tcp", Tool: "iperf3", Protocol: "tcp"}}, Replicas: []int{4}}}
	var samples []results.Sample
	for trial := 1; trial <= 5; trial++ {
		for _, dp := range []string{"gro-off", "gro-on"} {
			g := 10e9 * (1 + 0.01*float64(trial%3))
			if dp == "gro-on" {
				g *= 1.2
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 4}, Trial: trial,
				Metrics: map[string]float64{results.MetricBitrate: g, results.MetricBitrateSum: 4 * g}})
		}
	}
	m := analysis.Build(s, samples)
	for _, c := range []struct {
		what   string
		s      *study.Study
		metric string
	}{
		{"the workload's", s, results.MetricBitrate},
		{"without the study", nil, results.MetricBitrate},
		{"the precision target's", func() *study.Study {
			p := *s
			p.Spec.Precision = &study.Precision{Metric: results.MetricBitrateSum}
			return &p
		}(), results.MetricBitrateSum},
	} {
		metric, cs := cells(c.s, m, nil, "gro-off", "gro-on", false, nil)
		if metric != c.metric || len(cs) != 1 || cs[0].Metric != c.metric || cs[0].Decision != "better" {
			t.Errorf("%s: cells on %s %+v, want one better cell on %s", c.what, metric, cs, c.metric)
		}
		if v, why := verdict(cs, 0.02); v != advise.Accepted || strings.Count(why, "tcp at 4 pair(s)") != 1 {
			t.Errorf("%s: %s: %s, want the cell once", c.what, v, why)
		}
		for _, am := range also(c.s, m, "gro-on", false) {
			if am.Metric == c.metric {
				t.Errorf("%s: the verdict's metric %s is also beside it", c.what, am.Metric)
			}
		}
	}
}

// An A/B run that fails (here: its directory is taken, which the
// runner refuses before it changes anything; the machine lock is
// taken as held, so the test touches nothing of the host) is "failed", with the
// error beside it, not "undecided", which a larger budget would decide.
func TestCandidateRunFailed(t *testing.T) {
	e, in, resolve, _ := rfsHere(t)
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "prove-rfs", "taken"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Candidate(context.Background(), Options{Resolve: resolve, Budget: time.Minute, OutDir: out, JournalDir: t.TempDir(), MachineLocked: true}, e, in)
	if err == nil || e.Verdict != advise.Failed || e.Proof == nil || e.Proof.Error == "" || !strings.Contains(e.Measured, "the A/B run failed") {
		t.Errorf("err %v, verdict %q, measured %q, proof %+v", err, e.Verdict, e.Measured, e.Proof)
	}
}

// rfsHere is the rfs candidate on this machine's recorded inspection and
// the built-in A/B's resolver.
func rfsHere(t *testing.T) (*advise.Entry, *inspect.Inspection, func([]string) (*study.Study, error), study.Catalog) {
	t.Helper()
	b, err := os.ReadFile("../advise/testdata/this-machine.json")
	if err != nil {
		t.Fatal(err)
	}
	var in inspect.Inspection
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	rules, err := advise.Lookup("rfs")
	if err != nil {
		t.Fatal(err)
	}
	e := &advise.Entry{Result: advise.Result{Rule: rules[0], Name: "rfs"}}
	cat := study.Catalog{Datapaths: []string{"calico-vxlan"}, Tools: registry.Tools()}
	resolve := func(sets []string) (*study.Study, error) {
		return study.Parse("advise-ab (built in)", DefaultStudy, study.Options{Set: sets}, cat)
	}
	return e, &in, resolve, cat
}

// An A/B that measured every cell and then left host changes (its
// journal kept: runner.Run's PendingError) has its verdict, with what
// was left beside it, and returns the error, which stops the candidates
// after it (advise --prove); it was "failed" and its verdict lost. One
// that left changes without results is failed, the error kept.
func TestCandidateLeftChanges(t *testing.T) {
	kept := &journal.PendingError{Path: "/run/cnibench/r1.journal", Pending: 1}
	for _, withResults := range []bool{true, false} {
		e, in, resolve, _ := rfsHere(t)
		runStudy = func(_ context.Context, o runner.Options) (string, error) {
			if withResults {
				writeABRun(t, o.OutDir, o.Study)
			}
			return o.OutDir, fmt.Errorf("teardown: %w", kept)
		}
		t.Cleanup(func() { runStudy = runner.Run })
		err := Candidate(context.Background(), Options{Resolve: resolve, Budget: time.Minute, OutDir: t.TempDir(), JournalDir: t.TempDir(), MachineLocked: true}, e, in)
		var pe *journal.PendingError
		if !errors.As(err, &pe) {
			t.Fatalf("results %v: %v, want the kept journal's error", withResults, err)
		}
		switch {
		case withResults && (e.Verdict == advise.Failed || !strings.Contains(e.Measured, "its teardown left host changes")):
			t.Errorf("with results: verdict %q, measured %q", e.Verdict, e.Measured)
		case !withResults && e.Verdict != advise.Failed:
			t.Errorf("without results: verdict %q", e.Verdict)
		}
	}
}

// An A/B that failed before it recorded anything leaves no directory
// (runner.Run removed its files, Candidate the directory it made), and
// the proof names none: advice.json's run_dir pointed at a path gone.
func TestCandidateFailedEarlyNamesNoDirectory(t *testing.T) {
	e, in, resolve, _ := rfsHere(t)
	runStudy = func(_ context.Context, o runner.Options) (string, error) {
		return "", errors.New("build cluster for calico-vxlan: vxlan: operation not supported")
	}
	t.Cleanup(func() { runStudy = runner.Run })
	out := t.TempDir()
	if err := Candidate(context.Background(), Options{Resolve: resolve, Budget: time.Minute, OutDir: out, JournalDir: t.TempDir(), MachineLocked: true}, e, in); err == nil {
		t.Fatal("a failed A/B returned no error")
	}
	if e.Proof == nil || e.Proof.RunDir != "" || e.Verdict != advise.Failed {
		t.Errorf("proof %+v, verdict %q; want failed, no run directory", e.Proof, e.Verdict)
	}
	if _, err := os.Stat(filepath.Join(out, "prove-rfs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the A/B's empty directory stayed: %v", err)
	}
}

// writeABRun writes a run directory of s: 3 trials of each cell, B's
// bitrate 20% above A's.
func writeABRun(t *testing.T, dir string, s *study.Study) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.StudyFile), y, 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for _, c := range s.Cells() {
		v := 10e9
		if c.Tuning != s.Spec.Tunings[0].Name {
			v = 12e9
		}
		for trial := 1; trial <= 3; trial++ {
			b, err := json.Marshal(results.Sample{Cell: c, Trial: trial, Metrics: map[string]float64{results.MetricBitrate: v * (1 + 0.001*float64(trial))}})
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, b...), '\n')
		}
	}
	if err := os.WriteFile(filepath.Join(dir, results.SamplesFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
}
