package analysis

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

var testCatalog = study.Catalog{
	Datapaths: []string{"calico-vxlan"},
	Tools:     registry.Tools(),
}

func quickStudy(t *testing.T, set ...string) *study.Study {
	t.Helper()
	// The quick profile as these tests were written for: three replica
	// counts and the default margin (the profile itself is adaptive now).
	set = append([]string{"replicas=[1,2,4]", "margin=2%"}, set...)
	s, err := study.Resolve("rps-rfs", study.Options{Profile: "quick", Set: set}, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wobble spreads trials 1..3 by -1%, 0, +1% so every cell has a known SD.
func wobble(trial int) float64 { return 1 + 0.01*float64(trial-2) }

// synthetic returns 3 trials of baseline and rfs at each replica count of
// the quick profile (1, 2, 4), 2 CPUs each. rfs moves 10% more data;
// rps, rps+ and rfs+ have no samples.
func synthetic() []results.Sample {
	var out []results.Sample
	for _, reps := range []int{1, 2, 4} {
		for _, tn := range []string{"baseline", "rfs"} {
			gain := 1.0
			if tn == "rfs" {
				gain = 1.1
			}
			for trial := 1; trial <= 3; trial++ {
				br := 10e9 / float64(reps) * gain * wobble(trial)
				s := results.Sample{
					Cell:  results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: reps},
					Trial: trial,
					Metrics: map[string]float64{
						results.MetricBitrate: br, results.MetricBitrateSum: br * float64(reps),
						results.MetricRetransmits: float64(trial),
					},
				}
				for cpu := range 2 {
					s.Cores = append(s.Cores, results.CoreStat{
						CPU: cpu,
						CPUPercent: results.CPUPercent{
							Idle: 95 - 10*float64(reps) - 5*float64(cpu) + float64(trial), SoftIRQ: float64(reps + cpu),
							System: 1, User: 2,
						},
						NetRxPerSec: 1000 * float64(reps),
					})
				}
				out = append(out, s)
			}
		}
	}
	return out
}

func find(t *testing.T, rows []Row, tuning string, reps int, metric string, cpu int) Row {
	t.Helper()
	for _, r := range rows {
		if r.Tuning == tuning && r.Replicas == reps && r.Metric == metric && r.CPU == cpu {
			return r
		}
	}
	t.Fatalf("no row %s/%d/%s/cpu %d", tuning, reps, metric, cpu)
	return Row{}
}

func near(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.10g, want %.10g", name, got, want)
	}
}

func TestSummarize(t *testing.T) {
	s := quickStudy(t)
	rows := Summarize(s, synthetic())

	// 5 tunings × 3 replica counts; per cell 3 scalar metrics and
	// 5 core metrics × 2 CPUs, also for cells without samples.
	if want := 5 * 3 * (3 + 5*2); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}

	b := find(t, rows, "baseline", 2, results.MetricBitrate, -1)
	const t2 = 4.302652729911275 // t(0.975, 2)
	mean, sd := 5e9, 5e9*0.01
	if b.N != 3 || b.Unit != "bit/s" {
		t.Errorf("baseline row: %+v", b)
	}
	near(t, "mean", b.Mean, mean, 1e-12)
	near(t, "sd", b.SD, sd, 1e-9)
	near(t, "ci low", b.CI95Low, mean-t2*sd/math.Sqrt(3), 1e-9)
	near(t, "ci high", b.CI95High, mean+t2*sd/math.Sqrt(3), 1e-9)
	if !b.HasNorm || b.Normalized != 1 {
		t.Errorf("baseline normalized: %+v", b)
	}
	near(t, "baseline norm low", b.NormCI95Low, b.CI95Low/mean, 1e-12)

	r := find(t, rows, "rfs", 2, results.MetricBitrate, -1)
	var x, base []float64
	for _, smp := range synthetic() {
		if smp.Cell.Replicas == 2 {
			v := smp.Metrics[results.MetricBitrate]
			if smp.Cell.Tuning == "rfs" {
				x = append(x, v)
			} else {
				base = append(base, v)
			}
		}
	}
	want := stats.Ratio(x, base)
	if !r.HasNorm || want.Method != stats.MethodFieller {
		t.Fatalf("rfs row not normalized by Fieller: %+v, %+v", r, want)
	}
	near(t, "normalized", r.Normalized, 1.1, 1e-12)
	near(t, "norm low", r.NormCI95Low, want.Low, 1e-12)
	near(t, "norm high", r.NormCI95High, want.High, 1e-12)
	if !(r.NormCI95Low < 1.1 && 1.1 < r.NormCI95High) {
		t.Errorf("interval [%v, %v] misses 1.1", r.NormCI95Low, r.NormCI95High)
	}
	if sum := find(t, rows, "rfs", 4, results.MetricBitrateSum, -1); !sum.HasNorm {
		t.Error("bitrate_sum not normalized")
	}
	if rt := find(t, rows, "rfs", 4, results.MetricRetransmits, -1); rt.HasNorm || rt.Unit != "count" || rt.Mean != 2 {
		t.Errorf("retransmits: %+v", rt)
	}

	idle := find(t, rows, "rfs", 4, results.MetricCoreIdle, 1)
	near(t, "idle", idle.Mean, 95-40-5+2, 1e-12)
	if idle.Unit != "%" || idle.HasNorm {
		t.Errorf("idle row: %+v", idle)
	}
	if nr := find(t, rows, "baseline", 1, results.MetricCoreNetRx, 0); nr.Mean != 1000 || nr.Unit != "softirqs/s" || nr.SD != 0 {
		t.Errorf("net_rx row: %+v", nr)
	}

	// A cell without samples is present, empty, and not normalized.
	miss := find(t, rows, "rps", 1, results.MetricBitrate, -1)
	if miss.N != 0 || !math.IsNaN(miss.Mean) || miss.HasNorm {
		t.Errorf("missing cell: %+v", miss)
	}
}

func TestSummarizeWithoutBaseline(t *testing.T) {
	var rfs []results.Sample
	for _, s := range synthetic() {
		if s.Cell.Tuning == "rfs" {
			rfs = append(rfs, s)
		}
	}
	for _, r := range Summarize(quickStudy(t), rfs) {
		if r.HasNorm {
			t.Fatalf("normalized without baseline samples: %+v", r)
		}
	}
	// No study at all: cells come from the samples.
	rows := Summarize(nil, rfs)
	if len(rows) != 3*(3+5*2) {
		t.Errorf("%d rows without a study", len(rows))
	}
}

func TestSummarizeSkipsNonFinite(t *testing.T) {
	smp := synthetic()[:3]
	smp[1].Metrics[results.MetricBitrate] = math.NaN()
	r := find(t, Summarize(nil, smp), "baseline", 1, results.MetricBitrate, -1)
	if r.N != 2 {
		t.Errorf("N = %d, want 2 (NaN dropped)", r.N)
	}
}

// A percentage of a whole keeps its interval at or below 100 (an idle
// core of 99.5, 92 and 98% gave [86.6, 106.4]); a sum of cores' CPU does
// not.
func TestSummarizeKeepsSharesWithin100(t *testing.T) {
	smp := synthetic()[:3]
	for i, v := range []float64{99.5, 92, 98} {
		smp[i].Metrics["node_cpu_percent_client"] = v
		smp[i].Metrics["daemons_cpu_pct"] = v
	}
	if r := find(t, Summarize(nil, smp), "baseline", 1, "node_cpu_percent_client", -1); r.CI95High != 100 || r.CI95Low > 90 {
		t.Errorf("node_cpu_percent_client interval [%v, %v], want [<90, 100]", r.CI95Low, r.CI95High)
	}
	if r := find(t, Summarize(nil, smp), "baseline", 1, "daemons_cpu_pct", -1); !(r.CI95High > 100) {
		t.Errorf("daemons_cpu_pct cut at %v; it adds up cores", r.CI95High)
	}
}

func TestWriteCSV(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows, nil, study.Trials{}); err != nil {
		t.Fatal(err)
	}
	const header = "datapath,tuning,workload,replicas,metric,cpu,unit,n,mean,sd,ci95_low,ci95_high,normalized,normalized_ci95_low,normalized_ci95_high,p_vs_baseline,p_vs_first_datapath,impairment"
	text := buf.String()
	// Later columns are added at the end; these keep their positions.
	if !strings.HasPrefix(text, header+",") {
		t.Fatalf("header: %q", strings.SplitN(text, "\n", 2)[0])
	}
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 {
		t.Fatalf("%d records for %d rows", len(recs), len(rows))
	}
	get := func(tuning, reps, metric, cpu string) []string {
		for _, r := range recs[1:] {
			if r[1] == tuning && r[3] == reps && r[4] == metric && r[5] == cpu {
				return r
			}
		}
		t.Fatalf("no CSV record %s %s %s %q", tuning, reps, metric, cpu)
		return nil
	}
	if r := get("baseline", "1", "bitrate", ""); r[7] != "3" || r[8] != "10000000000" || r[12] != "1" {
		t.Errorf("baseline bitrate record: %q", r)
	}
	if r := get("rfs", "1", "bitrate", ""); r[12] == "" || r[13] == "" || r[14] == "" || !strings.HasPrefix(r[12], "1.1") {
		t.Errorf("rfs bitrate record: %q", r)
	}
	if r := get("rfs", "1", "core_idle", "0"); r[6] != "%" || r[12] != "" || r[8] != "87" {
		t.Errorf("core record: %q", r)
	}
	if r := get("rps", "2", "bitrate", ""); r[7] != "0" || r[8] != "" || r[9] != "" || r[12] != "" {
		t.Errorf("missing cell record: %q", r)
	}
}

func TestRefMatches(t *testing.T) {
	cpu3 := 3
	row := results.SummaryRow{Cell: results.Cell{Datapath: "d", Tuning: "rfs", Workload: "tcp", Replicas: 16}, Metric: "core_idle", CPU: 3}
	for _, tc := range []struct {
		ref  study.Reference
		want bool
	}{
		{study.Reference{Metric: "core_idle"}, true},
		{study.Reference{Metric: "core_idle", CPU: &cpu3, Replicas: 16, Tuning: "rfs", Datapath: "d"}, true},
		{study.Reference{Metric: "core_softirq"}, false},
		{study.Reference{Metric: "core_idle", Replicas: 1}, false},
		{study.Reference{Metric: "core_idle", Tuning: "rps"}, false},
		{study.Reference{Metric: "core_idle", Datapath: "other"}, false},
	} {
		if got := RefMatches(tc.ref, row); got != tc.want {
			t.Errorf("RefMatches(%+v) = %v", tc.ref, got)
		}
	}
}

func TestUnit(t *testing.T) {
	for m, want := range map[string]string{
		"bitrate": "bit/s", "retransmits": "count", "core_softirq": "%", "core_net_rx": "softirqs/s",
		"jitter_ms": "ms", "lost_percent": "%", "mystery": "",
		"cpp_total_ns": "ns/packet", "cpp_vxlan_ns": "ns/packet", "cpp_total_cycles": "cycles/packet", "cpp_ip_stack_cycles": "cycles/packet",
		"cpp_packets_count": "count", "timeouts_count": "count",
	} {
		if got := Unit(m); got != want {
			t.Errorf("Unit(%q) = %q, want %q", m, got, want)
		}
	}
}

func TestPValues(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	n := 0
	for _, r := range rows {
		switch {
		case r.Tuning == "rfs" && r.Metric == results.MetricBitrate:
			// rfs is 10% above baseline with 1% spread: clearly significant.
			n++
			if !(r.PBaseline < 0.001) {
				t.Errorf("%+v: p = %v", r.Cell, r.PBaseline)
			}
		case r.Tuning == "baseline" || r.N == 0:
			if !math.IsNaN(r.PBaseline) {
				t.Errorf("%+v %s: p = %v, want none", r.Cell, r.Metric, r.PBaseline)
			}
		}
		if !math.IsNaN(r.PFirstDatapath) {
			t.Errorf("p against the first datapath in a run of one datapath: %+v", r)
		}
	}
	if n != 3 {
		t.Errorf("%d rfs bitrate rows, want 3", n)
	}
	var x, base []float64
	for _, smp := range synthetic() {
		if smp.Cell.Replicas == 4 {
			v := smp.Metrics[results.MetricRetransmits]
			if smp.Cell.Tuning == "rfs" {
				x = append(x, v)
			} else {
				base = append(base, v)
			}
		}
	}
	// Identical samples (1, 2, 3 each: variance 1, not Welch's NaN case
	// of zero variance): t = 0, so p = 1, and it is the Welch p of stats.
	_, _, want := stats.Welch(x, base)
	if want != 1 {
		t.Errorf("stats.Welch of identical samples %v, %v: p = %v, want 1", x, base, want)
	}
	if r := find(t, rows, "rfs", 4, results.MetricRetransmits, -1); r.PBaseline != 1 {
		t.Errorf("retransmits p = %v, want 1", r.PBaseline)
	}
}

func TestPValuesAgainstFirstDatapath(t *testing.T) {
	var smp []results.Sample
	for _, x := range synthetic() {
		if x.Cell.Tuning != "baseline" {
			continue
		}
		smp = append(smp, x)
		y := x
		y.Cell.Datapath = "flannel-vxlan"
		y.Metrics = map[string]float64{results.MetricBitrate: x.Metrics[results.MetricBitrate] * 0.5}
		smp = append(smp, y)
	}
	m := Build(nil, smp)
	if m.FirstDatapath != "calico-vxlan" {
		t.Fatalf("first datapath %q", m.FirstDatapath)
	}
	r := find(t, m.Rows, "baseline", 1, results.MetricBitrate, -1)
	if !math.IsNaN(r.PFirstDatapath) {
		t.Errorf("first datapath against itself: p = %v", r.PFirstDatapath)
	}
	for _, r := range m.Rows {
		if r.Datapath == "flannel-vxlan" && r.Metric == results.MetricBitrate && !(r.PFirstDatapath < 0.001) {
			t.Errorf("flannel-vxlan at half the bitrate: p = %v", r.PFirstDatapath)
		}
	}
}

func TestCSVCarriesPValues(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	recs := csvRecords(t, rows, nil)
	if got := strings.Join(recs[0][15:17], ","); got != "p_vs_baseline,p_vs_first_datapath" {
		t.Fatalf("last columns %q", got)
	}
	want := find(t, rows, "rfs", 2, results.MetricBitrate, -1).PBaseline
	for _, r := range recs[1:] {
		if r[1] == "rfs" && r[3] == "2" && r[4] == "bitrate" {
			if !closeTo(r[15], want) || r[16] != "" {
				t.Errorf("rfs record %q, want p %v", r, want)
			}
			return
		}
	}
	t.Error("no rfs record")
}

func closeTo(field string, want float64) bool {
	v, err := strconv.ParseFloat(field, 64)
	return err == nil && math.Abs(v-want) <= 1e-12*math.Abs(want)
}

func TestModelJSONRoundTrip(t *testing.T) {
	m := Build(quickStudy(t), synthetic())
	var buf bytes.Buffer
	if err := WriteJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"version": 2`) || !strings.Contains(buf.String(), `"p_vs_baseline":null`) {
		t.Fatalf("summary.json lacks its version or null p values:\n%.600s", buf.String())
	}
	got, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(m.Rows) || len(got.References) != len(m.References) || got.Baseline != "baseline" {
		t.Fatalf("read back %d rows, %d references", len(got.Rows), len(got.References))
	}
	a, b := find(t, m.Rows, "rfs", 2, results.MetricBitrate, -1), find(t, got.Rows, "rfs", 2, results.MetricBitrate, -1)
	if a.PBaseline != b.PBaseline || a.NormCI95Low != b.NormCI95Low || b.NormMethod != "fieller" || b.CIMethod != CIStudentT {
		t.Errorf("row read back as %+v, want %+v", b, a)
	}
	if miss := find(t, got.Rows, "rps", 1, results.MetricBitrate, -1); !math.IsNaN(miss.Mean) {
		t.Errorf("missing mean read back as %v", miss.Mean)
	}
	for i, ref := range got.References {
		w := m.References[i]
		if ref.Reference.Metric != w.Reference.Metric || (w.Reference.Normalized != nil) != (ref.Reference.Normalized != nil) ||
			len(ref.Rows) != len(w.Rows) || ref.Label != "paper" {
			t.Errorf("reference %d read back as %+v, want %+v", i, ref, w)
		}
	}
	// A run without samples: an empty model reads back.
	buf.Reset()
	if err := WriteJSON(&buf, Build(nil, nil)); err != nil {
		t.Fatal(err)
	}
	if e, err := ReadJSON(&buf); err != nil || len(e.Rows) != 0 {
		t.Errorf("empty model: %v, %d rows", err, len(e.Rows))
	}
	if _, err := ReadJSON(strings.NewReader(`{"version": 99}`)); err == nil {
		t.Error("a model of another version was read")
	}
}

func TestReferenceMatches(t *testing.T) {
	m := Build(quickStudy(t), synthetic())
	for _, ref := range m.References {
		if ref.Label != "paper" {
			t.Errorf("reference labelled %q", ref.Label)
		}
		// "every core > 90% idle at 1 replica": both cores of baseline.
		if ref.Reference.Metric == results.MetricCoreIdle && ref.Reference.CPU == nil && ref.Reference.Replicas == 1 &&
			(len(ref.Rows) != 2 || ref.MeanLow != 82 || ref.MeanHigh != 87) {
			t.Errorf("idle reference: %+v", ref)
		}
	}
	r := find(t, m.Rows, "baseline", 1, results.MetricCoreIdle, 0)
	if len(r.Refs) == 0 || m.References[r.Refs[0]].Reference.Metric != results.MetricCoreIdle {
		t.Errorf("row refs %v", r.Refs)
	}
}

// TestWriteCSVSequential: the controller's decision (stops.json) stands
// at the end of the row it judged, with its interval, confidence and
// look; other rows, and per-core rows of the same cell, leave them empty.
// The judged row's plain "decision" gives way to it (empty, with a reason
// naming seq_decision), other rows keep theirs.
func TestWriteCSVSequential(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	var cell results.Cell
	for _, r := range rows {
		if r.Tuning != "baseline" && r.Metric == results.MetricBitrate && r.CPU < 0 && r.VsBaseline != nil {
			cell = r.Cell
			break
		}
	}
	ratio, lo, hi := 1.08, 1.02, 1.15
	stops := []results.Stop{{Cell: cell, Metric: results.MetricBitrate, Status: "budget", N: 4, Look: 4,
		Decision: "better", Ratio: &ratio, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875, Versus: "baseline"}}
	recs := csvRecords(t, rows, stops)
	head := recs[0]
	at := slices.Index(head, "seq_decision")
	if at < 0 || at+8 > len(head) {
		t.Fatalf("header %v has no seq_ columns", head)
	}
	if got := strings.Join(head[at:at+8], ","); got != "seq_decision,seq_ratio,seq_low,seq_high,seq_method,seq_confidence,seq_look,seq_versus" {
		t.Fatalf("seq_ columns %s", got)
	}
	dec, why := slices.Index(head, "decision"), slices.Index(head, "decision_reason")
	judged, plain := 0, 0
	for _, r := range recs[1:] {
		seq := strings.Join(r[at:at+8], ",")
		mine := r[0] == cell.Datapath && r[1] == cell.Tuning && r[2] == cell.Workload && r[3] == strconv.Itoa(cell.Replicas) && r[4] == results.MetricBitrate && r[5] == ""
		switch {
		case mine && seq != "better,1.08,1.02,1.15,paired-t,0.9875,4,baseline":
			t.Errorf("judged row's columns %s", seq)
		case !mine && seq != ",,,,,,,":
			t.Errorf("row %v has sequential columns %s", r[:6], seq)
		}
		switch {
		case mine && (r[dec] != "" || r[why] != SupersededReason):
			t.Errorf("judged row's plain decision %q (%q), want it left to seq_decision", r[dec], r[why])
		case !mine && r[dec] != "":
			plain++
		}
		if mine {
			judged++
		}
	}
	if judged != 1 {
		t.Errorf("%d rows carry the decision, want 1", judged)
	}
	if plain == 0 {
		t.Error("no other row kept its plain decision")
	}
}

// Pod set-up rows keep their values by trial, so that two workloads'
// rows are recognized as one measurement (the same pods' set-up in the
// rounds both ran) even when one ran fewer rounds; other rows keep none.
func TestSamePods(t *testing.T) {
	s := quickStudy(t)
	var samples []results.Sample
	add := func(wl string, trial int, setup float64) {
		c := results.Cell{Datapath: "calico-vxlan", Tuning: "baseline", Workload: wl, Replicas: 1}
		samples = append(samples, results.Sample{Cell: c, Trial: trial, Attempt: 1,
			Metrics: map[string]float64{"pod_setup_ms": setup, results.MetricBitrate: 1e9 + float64(trial)}})
	}
	for k, v := range []float64{2.1, 2.5, 1.9, 2.2} {
		add("tcp", k+1, v)
		if k < 2 {
			add("tcp-a", k+1, v)
			add("tcp-b", k+1, v+0.3)
		}
	}
	rows := Summarize(s, samples)
	get := func(wl, metric string) Row {
		for _, r := range rows {
			if r.Workload == wl && r.Metric == metric && r.CPU < 0 {
				return r
			}
		}
		t.Fatalf("no %s %s row", wl, metric)
		return Row{}
	}
	tcp, a, b := get("tcp", "pod_setup_ms"), get("tcp-a", "pod_setup_ms"), get("tcp-b", "pod_setup_ms")
	if tcp.Mean == a.Mean || !SamePods(tcp, a) || !SamePods(a, tcp) {
		t.Errorf("tcp (4 rounds, mean %g) and tcp-a (2 of them, mean %g): want one measurement", tcp.Mean, a.Mean)
	}
	if SamePods(tcp, b) {
		t.Error("tcp and tcp-b differ on their common rounds: not the same pods")
	}
	if get("tcp", results.MetricBitrate).PodTrials != nil {
		t.Error("a bitrate row keeps per-trial values it has no use for")
	}
}

// One trial has no interval: summary.csv leaves its bounds empty and
// summary.json writes null, not bounds equal to the mean that a script
// would read as a zero-width interval.
func TestOneTrialHasNoInterval(t *testing.T) {
	rows := []Row{
		{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "d", Tuning: "baseline", Workload: "tcp", Replicas: 1}, Metric: "bitrate", CPU: -1,
			N: 1, Mean: 5e9, SD: math.NaN(), CI95Low: 5e9, CI95High: 5e9, HasNorm: true, Normalized: 1, NormCI95Low: 1, NormCI95High: 1},
			CIMethod: CINone, NormMethod: NormOwn},
		{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: "d", Tuning: "baseline", Workload: "tcp", Replicas: 2}, Metric: "bitrate", CPU: -1,
			N: 2, Mean: 5e9, SD: 1e8, CI95Low: 4e9, CI95High: 6e9, HasNorm: true, Normalized: 1, NormCI95Low: 0.8, NormCI95High: 1.2},
			CIMethod: CIStudentT, NormMethod: NormOwn},
	}
	recs := csvRecords(t, rows, nil)
	if r := recs[1]; r[7] != "1" || r[8] != "5000000000" || r[10] != "" || r[11] != "" {
		t.Errorf("one trial: n %s mean %s ci [%q, %q]", r[7], r[8], r[10], r[11])
	}
	if r := recs[2]; r[10] != "4000000000" || r[11] != "6000000000" {
		t.Errorf("two trials: ci [%q, %q]", r[10], r[11])
	}
	// The baseline's own normalized row divides those bounds by the
	// mean: none for one trial, not [1, 1].
	for i, want := range []string{`"ci95_low":null,"ci95_high":null`, `"normalized_ci95_low":null,"normalized_ci95_high":null`,
		`"ci95_low":4e+09,"ci95_high":6e+09`, `"normalized_ci95_low":0.8,"normalized_ci95_high":1.2`} {
		i /= 2
		b, err := json.Marshal(rows[i])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("row %d: %s, want %s", i, b, want)
		}
	}
}
