package analysis

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// drifting returns n rounds of baseline and rfs at 1 replica where the
// machine's speed drifts by ±20% between rounds and rfs is 5% faster
// within each round: the unpaired interval is wide, the paired one tight.
func drifting(n int, gain float64) []results.Sample {
	var out []results.Sample
	for trial := 1; trial <= n; trial++ {
		speed := 1 + 0.2*float64(trial%3-1) + 0.001*float64(trial%2)
		for _, tn := range []string{"baseline", "rfs"} {
			g := 1.0
			if tn == "rfs" {
				g = gain * (1 + 0.002*float64(trial%2))
			}
			out = append(out, results.Sample{
				Cell:    results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1},
				Trial:   trial,
				Metrics: map[string]float64{results.MetricBitrate: 10e9 * speed * g},
			})
		}
	}
	return out
}

func TestPairedUnderDrift(t *testing.T) {
	rows := Summarize(quickStudy(t), drifting(6, 1.05))
	r := find(t, rows, "rfs", 1, results.MetricBitrate, -1)
	p := r.VsBaseline
	if p == nil {
		t.Fatal("no paired comparison against the baseline")
	}
	if p.Paired.Method != stats.MethodPairedT || p.Paired.N != 6 {
		t.Fatalf("paired = %+v, want a paired t interval over 6 rounds", p.Paired)
	}
	if p.Chosen.Method != stats.MethodPairedT {
		t.Errorf("chosen %s (%s), want the paired interval under drift", p.Chosen.Method, p.Chosen.Reason)
	}
	if !(p.Paired.High-p.Paired.Low < p.Unpaired.High-p.Unpaired.Low) {
		t.Errorf("paired width %g not below unpaired %g", p.Paired.High-p.Paired.Low, p.Unpaired.High-p.Unpaired.Low)
	}
	if p.Decision.Verdict != stats.Better {
		t.Errorf("decision %s (%s), want better", p.Decision.Verdict, p.Decision.Reason)
	}
	if p.Unpaired.Low != r.NormCI95Low {
		t.Errorf("unpaired interval %g differs from the normalized one %g", p.Unpaired.Low, r.NormCI95Low)
	}
	if b := find(t, rows, "baseline", 1, results.MetricBitrate, -1); b.VsBaseline != nil {
		t.Error("the baseline is compared with itself")
	}
	// Equal within the margin: a 0.1% gain.
	e := find(t, Summarize(quickStudy(t), drifting(6, 1.001)), "rfs", 1, results.MetricBitrate, -1)
	if e.VsBaseline.Decision.Verdict != stats.Equal {
		t.Errorf("0.1%% gain: decision %s (%s), want equal", e.VsBaseline.Decision.Verdict, e.VsBaseline.Decision.Reason)
	}
	// Two rounds: paired needs more; the reason says so.
	u := find(t, Summarize(quickStudy(t), drifting(1, 1.05)), "rfs", 1, results.MetricBitrate, -1)
	if u.VsBaseline.Decision.Verdict != stats.Undecided || u.VsBaseline.Decision.Reason == "" {
		t.Errorf("one round: %+v, want undecided with a reason", u.VsBaseline.Decision)
	}
}

func TestPairedAlignsTrials(t *testing.T) {
	// A missing trial on one side leaves a gap, not a shift.
	x := map[int]float64{1: 11, 2: 22, 4: 44}
	b := map[int]float64{1: 10, 2: 20, 3: 30, 4: 40}
	p := PairOf("baseline", x, b, 0.02, stats.HigherIsBetter)
	if p.Paired.N != 3 || p.Paired.Incomplete != 1 {
		t.Fatalf("pairs %d, incomplete %d; want 3 and 1", p.Paired.N, p.Paired.Incomplete)
	}
	near(t, "paired ratio", p.Paired.Ratio, 1.1, 1e-12)
}

func TestPairedColumnsAndJSON(t *testing.T) {
	m := Build(quickStudy(t), drifting(6, 1.05))
	recs := csvRecords(t, m.Rows, nil)
	head := recs[0]
	if strings.Join(head[:17], ",") != "datapath,tuning,workload,replicas,metric,cpu,unit,n,mean,sd,ci95_low,ci95_high,normalized,normalized_ci95_low,normalized_ci95_high,p_vs_baseline,p_vs_first_datapath" {
		t.Fatalf("the old columns moved: %v", head[:17])
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	found := false
	for _, rec := range recs[1:] {
		if len(rec) != len(head) {
			t.Fatalf("record of %d fields, header %d", len(rec), len(head))
		}
		if rec[col["tuning"]] == "rfs" && rec[col["replicas"]] == "1" && rec[col["metric"]] == results.MetricBitrate {
			found = true
			if rec[col["decision"]] != "better" || rec[col["chosen_method"]] != "paired-t" || rec[col["paired_n"]] != "6" {
				t.Errorf("rfs record: decision %q method %q n %q", rec[col["decision"]], rec[col["chosen_method"]], rec[col["paired_n"]])
			}
		}
	}
	if !found {
		t.Fatal("no rfs bitrate record")
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a, b := find(t, m.Rows, "rfs", 1, results.MetricBitrate, -1), find(t, got.Rows, "rfs", 1, results.MetricBitrate, -1)
	if b.VsBaseline == nil || b.VsBaseline.Chosen.Low != a.VsBaseline.Chosen.Low || b.VsBaseline.Decision != a.VsBaseline.Decision ||
		b.VsBaseline.Paired.N != 6 || got.Margin != DefaultMargin {
		t.Errorf("paired comparison read back as %+v, want %+v", b.VsBaseline, a.VsBaseline)
	}
}

// TestDatapathsAreNotPaired: datapaths run one after another, so the
// comparison with the first datapath never claims a paired interval, even
// when trial numbers line up and a pairing would look tighter.
func TestDatapathsAreNotPaired(t *testing.T) {
	x := map[int]float64{1: 11, 2: 22, 3: 33, 4: 44}
	ref := map[int]float64{1: 10, 2: 20, 3: 30, 4: 40}
	p := UnpairedOf("bridge", x, ref, DefaultMargin, stats.HigherIsBetter)
	if p.Paired.N != 0 || p.Chosen.Method == stats.MethodPairedT || p.Chosen.Method == stats.MethodPairedBootstrap || p.Paired.Reason == "" {
		t.Errorf("datapath comparison paired: %+v", p)
	}
	if p.Decision.Verdict != stats.Undecided {
		t.Errorf("a 10%% gain drowned in a 2x spread decided %s", p.Decision.Verdict)
	}
	// x's own interval reaches below 0: Fieller's set does too, and is cut
	// at 0, where a ratio of bitrates ends (stats.Ratio, TestRatioCutAtZero).
	low := UnpairedOf("bridge", map[int]float64{1: 0.1, 2: 9}, map[int]float64{1: 10, 2: 10.1}, DefaultMargin, stats.HigherIsBetter)
	if raw := stats.Ratio([]float64{0.1, 9}, []float64{10, 10.1}); low.Chosen.Low != 0 || low.Chosen.High != raw.High {
		t.Errorf("interval [%g, %g], want Fieller's [%g, %g] cut at 0", low.Chosen.Low, low.Chosen.High, raw.Low, raw.High)
	}
}

// TestDecisionTextCounts: a decision names what its interval rests on.
// With baseline trials in rounds 4 to 6 only, a six-trial row is decided
// on 3 pairs, not on its 6 trials; an unpaired decision names the trials
// of both sides.
func TestDecisionTextCounts(t *testing.T) {
	c := func(tn string) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	var smp []results.Sample
	for i := 1; i <= 6; i++ {
		w := 1 + 0.01*float64(i%3)
		if i > 3 {
			smp = append(smp, results.Sample{Cell: c("baseline"), Trial: i, Metrics: map[string]float64{results.MetricBitrate: 10e9 * w}})
		}
		smp = append(smp, results.Sample{Cell: c("rfs"), Trial: i, Metrics: map[string]float64{results.MetricBitrate: 11e9 * w}})
	}
	r := find(t, Summarize(quickStudy(t), smp), "rfs", 1, results.MetricBitrate, -1)
	p := r.VsBaseline
	if p == nil || p.Chosen.Method != stats.MethodPairedT || p.Paired.N != 3 || r.N != 6 {
		t.Fatalf("comparison %+v of a row of %d trials: want paired-t on 3 pairs", p, r.N)
	}
	if got := DecisionText(p, r.N, 3); !strings.Contains(got, "paired-t, 3 pairs: better") || strings.Contains(got, "n=6") {
		t.Errorf("paired decision %q, want it on 3 pairs", got)
	}
	u := UnpairedOf("bridge", map[int]float64{1: 11, 2: 12, 3: 11.5}, map[int]float64{1: 10, 2: 10.2}, DefaultMargin, stats.HigherIsBetter)
	if got := DecisionText(u, 3, 2); !strings.Contains(got, "fieller, n=3 vs bridge's 2:") {
		t.Errorf("unpaired decision %q, want both sides' trials", got)
	}
	if got := DecisionText(u, 3, 0); !strings.Contains(got, "fieller, n=3:") {
		t.Errorf("unpaired decision without the reference's count %q", got)
	}
}

// TestSharedRoundsPairDatapaths: datapaths that ran in shared rounds
// (trial 1 of both before trial 2 of either) are compared by round, and
// the drift between rounds, which an unpaired interval counts as noise,
// cancels; the same values measured one datapath after the other are
// compared unpaired. Samples without times prove nothing: unpaired.
func TestSharedRoundsPairDatapaths(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	// The machine drifts by ±20% between rounds; vxlan is 10% below the
	// host in every round.
	drift := []float64{1, 1.2, 0.8, 1.1, 0.9, 1.15}
	sample := func(dp string, trial int, at time.Duration, v float64) results.Sample {
		return results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "tcp", Replicas: 1},
			Trial: trial, Start: t0.Add(at), Metrics: map[string]float64{results.MetricBitrate: v, "transactions_per_s": v / 1e6}}
	}
	var shared, oneAfter []results.Sample
	for i, d := range drift {
		k := i + 1
		shared = append(shared, sample("calico-vxlan", k, time.Duration(2*i)*time.Minute, 10e9*d),
			sample("flannel-vxlan", k, time.Duration(2*i+1)*time.Minute, 9e9*d))
		oneAfter = append(oneAfter, sample("calico-vxlan", k, time.Duration(i)*time.Minute, 10e9*d),
			sample("flannel-vxlan", k, time.Duration(10+i)*time.Minute, 9e9*d))
	}
	if got := SharedRounds(shared); !got[1] {
		t.Fatalf("shared rounds not seen: %v", got)
	}
	if got := SharedRounds(oneAfter); got[1] {
		t.Fatalf("datapaths one after another taken for shared rounds: %v", got)
	}
	cat := study.Catalog{Datapaths: []string{"calico-vxlan", "flannel-vxlan"}, Tools: testCatalog.Tools}
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: []string{
		"datapaths=[calico-vxlan,flannel-vxlan]", "replicas=[1]"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	v := findDP(t, Summarize(s, shared), "flannel-vxlan").VsFirstDatapath
	if v == nil || v.Paired.N != 6 || v.Chosen.Method != stats.MethodPairedT || v.Decision.Verdict != stats.Worse {
		t.Fatalf("shared rounds: %+v, want worse on 6 pairs", v)
	}
	// A request/response rate is compared the same way (seed 001 compares
	// modes in transactions/s).
	rates := 0
	for _, r := range Summarize(s, shared) {
		if r.Datapath == "flannel-vxlan" && r.Metric == "transactions_per_s" && r.CPU < 0 && r.N > 0 {
			rates++
			if v := r.VsFirstDatapath; v == nil || v.Paired.N != 6 || v.Decision.Verdict != stats.Worse {
				t.Errorf("transactions_per_s: %+v, want worse on 6 pairs", v)
			}
		}
	}
	if rates != 1 {
		t.Errorf("%d transactions_per_s rows of flannel-vxlan, want 1", rates)
	}
	u := findDP(t, Summarize(s, oneAfter), "flannel-vxlan").VsFirstDatapath
	if u == nil || u.Paired.N != 0 || u.Decision.Verdict != stats.Undecided {
		t.Fatalf("one after another: %+v, want unpaired and undecided under the drift", u)
	}
	for i := range shared {
		shared[i].Start = time.Time{}
	}
	if got := SharedRounds(shared); got[1] {
		t.Errorf("samples without times taken for shared rounds")
	}
}

func findDP(t *testing.T, rows []Row, dp string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Datapath == dp && r.Metric == results.MetricBitrate && r.CPU < 0 {
			return r
		}
	}
	t.Fatalf("no bitrate row of %s", dp)
	return Row{}
}

// Decisions keeps the controller's decisions made at an adaptive
// design's looks and leaves out a fixed design's stops, its one look at
// 95% (the row's own comparison over all trials: a report would show it
// twice) and a stop before any look alike (the budget stopped the cell
// after one trial, or its first trial failed every attempt), whose
// "undecided" would stand in for the row's comparison. Where the
// design is unknown, a look at 95% is taken for a fixed design's.
func TestDecisionsAtLooks(t *testing.T) {
	c := results.Cell{Datapath: "calico-vxlan", Tuning: "rfs", Workload: "tcp", Replicas: 1}
	at := func(look int, conf float64) results.Stop {
		return results.Stop{Cell: c, Metric: results.MetricBitrate, N: 3, Look: look, Decision: "worse", Confidence: conf}
	}
	before := results.Stop{Cell: c, Metric: results.MetricBitrate, N: 1, Decision: "undecided",
		DecisionReason: "no decision before 5 trials", Confidence: 0.95}
	adaptive, fixed, unknown := study.Trials{Min: 3, Max: 20}, study.Fixed(5), study.Trials{}
	for _, tc := range []struct {
		name   string
		st     results.Stop
		design study.Trials
		kept   bool
	}{
		{"adaptive, at a look", at(3, 1-0.05/6), adaptive, true},
		{"adaptive, stopped before the first look", at(0, 0.95), adaptive, true},
		{"fixed, its one look", at(3, 0.95), fixed, false},
		{"fixed, stopped before any look", before, fixed, false},
		{"fixed, given up at its first trial", results.Stop{Cell: c, Metric: results.MetricBitrate, Decision: "undecided",
			DecisionReason: "no decision before 5 trials", Confidence: 0.95, Failed: "trial 1 failed"}, fixed, false},
		{"design unknown, at a look", at(3, 1-0.05/6), unknown, true},
		{"design unknown, a look at 95%", at(3, 0.95), unknown, false},
		{"design unknown, before any look", before, unknown, true},
		{"no decision", results.Stop{Cell: c, Metric: results.MetricBitrate, N: 3}, adaptive, false},
	} {
		_, ok := Decisions([]results.Stop{tc.st}, tc.design)[Key{Cell: c, Metric: results.MetricBitrate, CPU: -1}]
		if ok != tc.kept {
			t.Errorf("%s: kept %v, want %v", tc.name, ok, tc.kept)
		}
	}
}

// TestLatencyComparedLowerBetter: a tuning that cuts the latency's mean,
// median and tail and the CPU cost per packet by 10% in every round is
// decided better on each, with the ratio below 1; the extremes (min,
// max) get no comparison, as one outlier decides their ratio.
func TestLatencyComparedLowerBetter(t *testing.T) {
	var samples []results.Sample
	lower := []string{"rtt_mean_us", "rtt_p50_us", "rtt_p99_us", "latency_p99_ms", "cpp_total_ns"}
	for trial := 1; trial <= 6; trial++ {
		speed := 1 + 0.2*float64(trial%3-1) // drift between rounds
		for _, tn := range []string{"baseline", "rfs"} {
			g := 1.0
			if tn == "rfs" {
				g = 0.9 * (1 + 0.002*float64(trial%2))
			}
			m := map[string]float64{results.MetricTransactions: 30000 / (speed * g), "rtt_max_us": 3000 * float64(trial), "rtt_min_us": 20}
			for _, name := range lower {
				m[name] = 40 * speed * g
			}
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}, Trial: trial, Metrics: m})
		}
	}
	m := Build(quickStudy(t), samples)
	for _, name := range lower {
		r := find(t, m.Rows, "rfs", 1, name, -1)
		p := r.VsBaseline
		if p == nil {
			t.Errorf("%s: no comparison with the baseline", name)
			continue
		}
		if p.Decision.Verdict != stats.Better || p.Chosen.Method != stats.MethodPairedT || p.Chosen.Ratio > 0.91 || p.Chosen.Ratio < 0.89 {
			t.Errorf("%s: %s %.3f by %s, want better at about 0.9, paired", name, p.Decision.Verdict, p.Chosen.Ratio, p.Chosen.Method)
		}
		if !slices.Contains(lowerMetrics, name) {
			t.Errorf("%s is not in lowerMetrics", name)
		}
	}
	if p := find(t, m.Rows, "rfs", 1, results.MetricTransactions, -1).VsBaseline; p == nil || p.Decision.Verdict != stats.Better {
		t.Errorf("transactions: %+v, want better (higher)", p)
	}
	for _, name := range []string{"rtt_max_us", "rtt_min_us", results.MetricTransactions} {
		if r := find(t, m.Rows, "rfs", 1, name, -1); slices.Contains(lowerMetrics, name) || (name != results.MetricTransactions && r.VsBaseline != nil) {
			t.Errorf("%s compared as a latency", name)
		}
	}
}

// Pod start-up's cells are decided on startup_ms (its tool's first
// headline metric, as the runner judges them when the study's precision
// target names none): its rows are compared with the first datapath,
// lower being better, as the run's own decisions are. Before, startup_ms
// was on no list of compared metrics, and cni-compare's startup cells had
// a decision in the run's output and only Welch's p in the summary.
func TestStartupRowsDecided(t *testing.T) {
	cat := study.Catalog{Datapaths: []string{"flannel", "flannel-vxlan", "weave"}, Tools: testCatalog.Tools}
	s, err := study.Resolve("cni-compare", study.Options{Set: []string{
		"datapaths=[flannel,weave]", "workloads=[startup]", "trials=5"}}, cat)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var samples []results.Sample
	for k := 1; k <= 5; k++ {
		for i, c := range s.Cells() {
			v := 1000 * (1 + 0.01*float64(k%3))
			if c.Datapath == "weave" {
				v *= 1.5
			}
			samples = append(samples, results.Sample{Cell: c, Trial: k,
				Start: t0.Add(time.Duration(k*100+i) * time.Second), Metrics: map[string]float64{"startup_ms": v}})
		}
	}
	n := 0
	for _, r := range Summarize(s, samples) {
		if r.Metric != "startup_ms" || r.Datapath != "weave" || r.CPU >= 0 {
			continue
		}
		n++
		if v := r.VsFirstDatapath; v == nil || v.Decision.Verdict != stats.Worse || !(v.Chosen.Ratio > 1.4) {
			t.Errorf("%s: %+v, want worse at about 1.5 (lower is better)", r.Workload, v)
		}
	}
	if n == 0 {
		t.Fatal("no startup_ms row of weave")
	}
}

// A datapath compared unpaired has no paired ratio: summary.csv leaves
// its dp_paired_* columns empty and summary.json writes null, not 0 (a
// datapath that moved nothing).
func TestUnpairedHasNoPairedRatio(t *testing.T) {
	p := UnpairedOf("calico-vxlan", map[int]float64{1: 9e9, 2: 9.1e9, 3: 8.9e9}, map[int]float64{1: 10e9, 2: 10.1e9, 3: 9.9e9}, 0.02, stats.HigherIsBetter)
	if cols := pairCols(p, false, ""); cols[0] != "" || cols[1] != "" || cols[3] != "" || cols[6] != string(stats.MethodFieller) || cols[7] != string(stats.Worse) {
		t.Errorf("csv columns %q", cols)
	}
	j, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"paired_ratio":null,"paired_ci95_low":null,"paired_ci95_high":null`) {
		t.Errorf("json %s", j)
	}
}

// A datapath compared unpaired without a valid interval says why as the
// paired comparisons do (stats.CompareAt): both intervals' causes, not a
// bare "no valid interval".
func TestUnpairedNoIntervalSaysWhy(t *testing.T) {
	p := UnpairedOf("host", map[int]float64{1: 9e9}, map[int]float64{1: 10e9, 2: 10.1e9, 3: 9.9e9}, 0.02, stats.HigherIsBetter)
	if p.Decision.Verdict != stats.Undecided || p.Decision.Reason != p.Chosen.Reason ||
		!strings.Contains(p.Decision.Reason, "not paired") || !strings.Contains(p.Decision.Reason, "fewer than 2 values on a side") {
		t.Errorf("decision %+v, want undecided with the choice's reason %q", p.Decision, p.Chosen.Reason)
	}
}

// UnpairedOf sums the values in trial order, not in a map's (random)
// order: summary.csv's full-precision columns are the same in every
// build of the report.
func TestUnpairedInTrialOrder(t *testing.T) {
	x, ref := map[int]float64{}, map[int]float64{}
	var xs, bs []float64
	for k := 1; k <= 16; k++ {
		// Magnitudes far apart, so that another order of summing gives
		// other low bits.
		v, b := 0.1*float64(k)+1e7*float64(k%3), 0.3*float64(k)+1e7*float64(k%5)
		x[k], ref[k] = v, b
		xs, bs = append(xs, v), append(bs, b)
	}
	want := stats.Ratio(xs, bs)
	for range 200 {
		u := UnpairedOf("host", x, ref, 0.02, stats.HigherIsBetter).Unpaired
		if u.Ratio != want.Ratio || u.Low != want.Low || u.High != want.High {
			t.Fatalf("unpaired %v [%v, %v], want %v [%v, %v] (the trial order's sums)", u.Ratio, u.Low, u.High, want.Ratio, want.Low, want.High)
		}
	}
}
