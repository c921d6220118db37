package analysis

import (
	"bytes"
	"encoding/csv"
	"math"
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

func find(t *testing.T, rows []results.SummaryRow, tuning string, reps int, metric string, cpu int) results.SummaryRow {
	t.Helper()
	for _, r := range rows {
		if r.Tuning == tuning && r.Replicas == reps && r.Metric == metric && r.CPU == cpu {
			return r
		}
	}
	t.Fatalf("no row %s/%d/%s/cpu %d", tuning, reps, metric, cpu)
	return results.SummaryRow{}
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

func TestWriteCSV(t *testing.T) {
	rows := Summarize(quickStudy(t), synthetic())
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	const header = "datapath,tuning,workload,replicas,metric,cpu,unit,n,mean,sd,ci95_low,ci95_high,normalized,normalized_ci95_low,normalized_ci95_high"
	text := buf.String()
	if !strings.HasPrefix(text, header+"\n") {
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

func TestWriteMarkdown(t *testing.T) {
	s := quickStudy(t)
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, s, Summarize(s, synthetic())); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"# rps-rfs: summary",
		"## calico-vxlan / tcp",
		"### Normalized bitrate (vs baseline)",
		"| tuning | 1 replica | 2 replicas | 4 replicas |",
		"| rfs | 1.100 [",
		"| rps | missing | missing | missing |",
		"### bitrate (Gbit/s)",
		"| baseline | 10.00 [",
		"### core_idle per core (%)",
		"## Published reference numbers",
		"| rfs+, 16 replicas | bitrate | normalized 1.24 | not measured |",
		// "every core > 90% idle at 1 replica": matches our 2 cores.
		"| baseline, 1 replica, every cpu | core_idle | 90.0 % | 82.0 to 87.0 % (means of 2 rows) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

func TestMarkdownInlineReference(t *testing.T) {
	// With 16 replicas in the matrix, the published normalized value sits
	// beside ours in the table.
	s := quickStudy(t, "replicas=[16]")
	var smp []results.Sample
	for _, x := range synthetic() {
		if x.Cell.Replicas == 4 {
			x.Cell.Replicas = 16
			x.Cell.Tuning = strings.Replace(x.Cell.Tuning, "rfs", "rfs+", 1)
			smp = append(smp, x)
		}
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, s, Summarize(s, smp)); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "· paper 1.24") || strings.Contains(md, "| rfs+, 16 replicas | bitrate | normalized 1.24 | not measured") {
		t.Errorf("reference not matched:\n%s", md)
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

func TestWelchVsBaseline(t *testing.T) {
	p := WelchVsBaseline(synthetic(), "baseline", results.MetricBitrate)
	if len(p) != 3 {
		t.Fatalf("%d p values, want 3 (rfs at 1, 2, 4 replicas): %v", len(p), p)
	}
	for c, v := range p {
		// rfs is 10% above baseline with 1% spread: clearly significant.
		if c.Tuning != "rfs" || !(v < 0.001) {
			t.Errorf("%+v: p = %v", c, v)
		}
	}
}
