package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

func dpRow(dp, wl, metric string, mean float64) analysis.Row {
	return analysis.Row{SummaryRow: results.SummaryRow{
		Cell:   results.Cell{Datapath: dp, Tuning: "baseline", Workload: wl, Replicas: 1},
		Metric: metric, CPU: -1, N: 3, Mean: mean, CI95Low: mean * 0.9, CI95High: mean * 1.1,
	}, PBaseline: math.NaN(), PFirstDatapath: math.NaN()}
}

func TestDatapathFigures(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rows := []analysis.Row{
		dpRow("bridge", "tcp-inter", results.MetricBitrate, 9e9),
		dpRow("bridge", "udp-inter", results.MetricBitrate, 1e9),
		dpRow("calico-vxlan", "tcp-inter", results.MetricBitrate, 6e9),
		dpRow("calico-vxlan", "udp-inter", results.MetricBitrate, 0.9e9),
		dpRow("calico-vxlan", "udp-inter", "lost_percent", 3),
		dpRow("bridge", "tcp-inter", "pod_setup_ms", 2.5),
	}
	rows[2].PFirstDatapath = 0.0123 // set by hand: the table shows the model's p
	figs, tables := datapathFigures(s, analysis.Model{Rows: rows})
	// TCP at 6-9 Gbit/s and UDP at 1 do not share an axis: two bitrate
	// figures, one table.
	if len(figs) != 4 || len(tables) != 3 {
		t.Fatalf("%d figures, %d tables; want 4 figures (bitrate twice, loss, setup) and 3 tables", len(figs), len(tables))
	}
	if figs[0].Title != "bitrate by datapath (tcp-inter)" || figs[1].Title != "bitrate by datapath (udp-inter)" || figs[2].Title != "lost_percent by datapath" {
		t.Errorf("figures %q, %q, %q", figs[0].Title, figs[1].Title, figs[2].Title)
	}
	if !strings.Contains(string(figs[0].SVG), "<svg") {
		t.Error("bitrate figure has no SVG")
	}
	bt := tables[0]
	if len(bt.Rows) != 2 || bt.Rows[0][0] != "bridge" || len(bt.Head) != 3 {
		t.Fatalf("bitrate table %+v", bt)
	}
	if got := bt.Rows[1][1]; got != "6.00 [5.40, 6.60]; p=0.012" || strings.Contains(bt.Rows[0][1], "p") {
		t.Errorf("bitrate table cells %q, want the hand-set p beside calico-vxlan only", bt.Rows)
	}
	// A datapath without a value for a workload shows a dash, not a zero.
	lt := tables[1]
	if lt.Rows[0][0] != "bridge" || lt.Rows[0][1] != "—" {
		t.Errorf("loss table %+v", lt)
	}
}

func TestNoDatapathFiguresForOneDatapath(t *testing.T) {
	rows := []analysis.Row{dpRow("bridge", "tcp", results.MetricBitrate, 1e9)}
	if figs, _ := datapathFigures(&study.Study{}, analysis.Model{Rows: rows}); len(figs) != 0 {
		t.Errorf("%d figures for a single-datapath run", len(figs))
	}
}

// TestSweepsAcrossDatapaths: a sweep measured on two datapaths is drawn
// once with a line per datapath; a single-variant workload is not.
func TestSweepsAcrossDatapaths(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline", Replicas: []int{1},
		Datapaths: []study.Datapath{{Name: "bridge"}, {Name: "macvlan"}},
		Workloads: []study.Workload{{Name: "flows", Tool: "iperf3", Parallels: []int{1, 2}}, {Name: "tcp", Tool: "iperf3"}}}}
	var rows []analysis.Row
	for _, dp := range []string{"bridge", "macvlan"} {
		for _, w := range append(variantNames(s.Spec.Workloads[0]), "tcp") {
			rows = append(rows, dpRow(dp, w, results.MetricBitrate, 5e9))
		}
	}
	figs := sweepsAcrossDatapaths(s, rows)
	if len(figs) != 1 {
		t.Fatalf("%d figures, want 1 (the flows sweep)", len(figs))
	}
	svg := string(figs[0].SVG)
	if !strings.Contains(svg, "bridge") || !strings.Contains(svg, "macvlan") || !strings.Contains(figs[0].Title, "flows") {
		t.Errorf("figure %q lacks a line per datapath", figs[0].Title)
	}
	if figs := sweepsAcrossDatapaths(s, rows[:3]); len(figs) != 0 {
		t.Errorf("%d figures for a sweep on one datapath", len(figs))
	}
}

func variantNames(w study.Workload) []string {
	var out []string
	for _, v := range w.Variants() {
		out = append(out, v.Name)
	}
	return out
}

// TestPodSetupColumnsFold: workloads that ran on the same pods carry the
// same pod set-up (one measurement), shown as one column that says so;
// traffic metrics are never folded, even when their values coincide.
func TestPodSetupColumnsFold(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	var rows []analysis.Row
	for i, dp := range []string{"bridge", "weave"} {
		for _, wl := range []string{"tcp-inter", "rr-inter", "tcp-intra"} {
			setup := 2.0 + float64(i)
			if wl == "tcp-intra" {
				setup += 0.5
			}
			pods := dpRow(dp, wl, "pod_setup_ms", setup)
			pods.PodTrials = map[int]float64{1: setup}
			rows = append(rows, pods, dpRow(dp, wl, "lost_percent", 0))
		}
	}
	_, tables := datapathFigures(s, analysis.Model{Rows: rows})
	if len(tables) != 2 {
		t.Fatalf("%d tables, want lost_percent and pod_setup_ms", len(tables))
	}
	if got := tables[0].Head; len(got) != 4 {
		t.Errorf("lost_percent columns %q: coinciding traffic values must not fold", got)
	}
	if got := strings.Join(tables[1].Head, " | "); got != "datapath — pod_setup_ms (ms) | tcp-inter (+1, same pods) | tcp-intra" {
		t.Errorf("pod_setup_ms columns %q", got)
	}
}

// TestScaleGroups: workloads within 5x of a group's largest share it, in
// their own order; a smaller one starts the next group; zeros join the
// last group rather than a figure of nothing.
func TestScaleGroups(t *testing.T) {
	for _, tc := range []struct {
		maxes []float64
		want  string
	}{
		{[]float64{12, 16, 1, 0.9}, "[[0 1] [2 3]]"},
		{[]float64{1, 12, 0.9, 16}, "[[1 3] [0 2]]"},
		{[]float64{10, 2.5, 1.9}, "[[0 1] [2]]"},
		{[]float64{3, 0, 2}, "[[0 1 2]]"},
		{[]float64{0, 0}, "[[0 1]]"},
		{nil, "[]"},
	} {
		if got := fmt.Sprint(scaleGroups(tc.maxes, scaleSplit)); got != tc.want {
			t.Errorf("scaleGroups(%v) = %s, want %s", tc.maxes, got, tc.want)
		}
	}
}

// TestOutlierKeepsOneAxis: one datapath losing 60% where the others lose
// 1% is the comparison the figure is for, not a different scale: the two
// UDP workloads stay in one figure.
func TestOutlierKeepsOneAxis(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rows := []analysis.Row{
		dpRow("bridge", "udp-inter", "lost_percent", 1),
		dpRow("flannel-udp", "udp-inter", "lost_percent", 60),
		dpRow("weave", "udp-inter", "lost_percent", 1.2),
		dpRow("bridge", "udp-intra", "lost_percent", 0.9),
		dpRow("flannel-udp", "udp-intra", "lost_percent", 0.7),
		dpRow("weave", "udp-intra", "lost_percent", 1.1),
	}
	figs, _ := datapathFigures(s, analysis.Model{Rows: rows})
	if len(figs) != 1 || figs[0].Title != "lost_percent by datapath" {
		var titles []string
		for _, f := range figs {
			titles = append(titles, f.Title)
		}
		t.Errorf("figures %q, want one: lost_percent by datapath", titles)
	}
}

// A bitrate cell compared with the first datapath shows the ratio, its
// interval and the decision at the margin instead of a bare p, so that a
// reader sees how much slower a datapath is and whether that is settled.
func TestDatapathTableDecidesAgainstFirst(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	host := map[int]float64{1: 10e9, 2: 10.2e9, 3: 9.9e9}
	slow := map[int]float64{1: 8e9, 2: 8.1e9, 3: 7.9e9}
	one := map[int]float64{1: 8e9}
	rows := []analysis.Row{
		dpRow("host", "tcp", results.MetricBitrate, 10e9),
		dpRow("vxlan", "tcp", results.MetricBitrate, 8e9),
		dpRow("udp", "tcp", results.MetricBitrate, 8e9),
		dpRow("vxlan", "tcp", "lost_percent", 1),
		dpRow("host", "tcp", "lost_percent", 2),
	}
	rows[1].VsFirstDatapath = analysis.UnpairedOf("host", slow, host, 0.02, stats.HigherIsBetter)
	rows[2].VsFirstDatapath = analysis.UnpairedOf("host", one, host, 0.02, stats.HigherIsBetter)
	rows[1].PFirstDatapath, rows[3].PFirstDatapath = 0.001, 0.5
	tables := datapathTables(s, analysis.Model{Rows: rows})
	bt := tables[0]
	if got := bt.Rows[1][1]; got != "8.00 [7.20, 8.80]; ×0.797 [0.772, 0.823] fieller, n=3 vs host's 3: worse" {
		t.Errorf("vxlan's bitrate cell %q, want the ratio to host, its interval, method and count, and worse", got)
	}
	if got := bt.Rows[2][1]; got != "8.00 [7.20, 8.80]; ×0.797, n=3 vs host's 3: undecided (no interval: fewer than 2 trials on a side)" {
		t.Errorf("a one-trial datapath's cell %q", got)
	}
	// The first datapath moved nothing: no ratio, and why, not "×NaN"
	// and "fewer than 2 trials" (3 trials a side).
	zero := append([]analysis.Row(nil), rows[:2]...)
	zero[1].VsFirstDatapath = analysis.PairOf("host", slow, map[int]float64{1: 0, 2: 0, 3: 0}, 0.02, stats.HigherIsBetter)
	if got := datapathTables(s, analysis.Model{Rows: zero})[0].Rows[1][1]; got != "8.00 [7.20, 8.80]; no ratio, n=3 vs host's 3: undecided (no interval: host's mean is 0)" {
		t.Errorf("a cell against a first datapath at 0: %q", got)
	}
	if got := tables[1].Rows[1][1]; got != "1.0 [0.9, 1.1]; p=0.500" {
		t.Errorf("loss cell %q, want Welch's p (no decision for a metric without a direction)", got)
	}
	// An adaptive run's decision at its looks is the one shown, as in
	// the repetitions table; a decision against something else (the
	// baseline tuning) is not this table's.
	r, lo, hi := 0.79, 0.75, 0.83
	st := results.Stop{Cell: rows[1].Cell, Metric: results.MetricBitrate, Status: "target", N: 3, Look: 3,
		Decision: "worse", Versus: "host", Ratio: &r, Low: &lo, High: &hi, Method: "paired-t", Confidence: 0.9875}
	if got := datapathTables(s, analysis.Model{Rows: rows, Stops: []results.Stop{st}})[0].Rows[1][1]; got != "8.00 [7.20, 8.80]; ×0.790 [0.750, 0.830] paired-t (98.75%), at the look after 3 trials: worse" {
		t.Errorf("vxlan's cell with the run's decision %q", got)
	}
	// Stopped by the budget before the first look: the plain interval,
	// and why there is no decision.
	nolook := st
	nolook.Look, nolook.N, nolook.Status, nolook.Decision, nolook.DecisionReason, nolook.Confidence = 0, 2, "budget", "undecided", "no decision before 3 trials", 0.95
	if got := datapathTables(s, analysis.Model{Rows: rows, Stops: []results.Stop{nolook}})[0].Rows[1][1]; got != "8.00 [7.20, 8.80]; ×0.790 [0.750, 0.830] paired-t (95%), 2 trials; undecided: no decision before 3 trials" {
		t.Errorf("vxlan's cell stopped before a look %q", got)
	}
	st.Versus = "rps"
	if got := datapathTables(s, analysis.Model{Rows: rows, Stops: []results.Stop{st}})[0].Rows[1][1]; !strings.HasSuffix(got, "×0.797 [0.772, 0.823] fieller, n=3 vs host's 3: worse") {
		t.Errorf("vxlan's cell with a decision against a tuning %q", got)
	}
}

// In a run of several datapaths each round builds new pods, so cells
// that stopped at different rounds hold different shares of the same
// measurements: their pod set-up columns still fold (they agree on every
// round both ran), and the column shows the cell with the most rounds.
func TestPodSetupFoldsAcrossRounds(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	rounds := map[int]float64{1: 2.0, 2: 2.6, 3: 1.9, 4: 2.2, 5: 2.4}
	upTo := func(dp, wl string, n int, change float64) analysis.Row {
		r := dpRow(dp, wl, "pod_setup_ms", 0)
		r.PodTrials = map[int]float64{}
		sum := 0.0
		for k := 1; k <= n; k++ {
			r.PodTrials[k] = rounds[k] + change
			sum += rounds[k] + change
		}
		r.N, r.Mean = n, sum/float64(n)
		return r
	}
	rows := []analysis.Row{
		upTo("host", "tcp-inter", 5, 0), upTo("host", "udp-inter", 3, 0), upTo("host", "tcp-intra", 5, 0.5),
		upTo("bridge", "tcp-inter", 3, 1), upTo("bridge", "udp-inter", 5, 1), upTo("bridge", "tcp-intra", 3, 1.5),
	}
	tb := datapathTables(s, analysis.Model{Rows: rows})[0]
	if got := strings.Join(tb.Head, " | "); got != "datapath — pod_setup_ms (ms) | tcp-inter (+1, same pods) | tcp-intra" {
		t.Fatalf("pod_setup_ms columns %q", got)
	}
	// bridge's column is udp-inter's row: 5 rounds against tcp-inter's 3.
	if got := tb.Rows[1][1]; !strings.HasPrefix(got, fmt.Sprintf("%.3g", rows[4].Mean)) {
		t.Errorf("bridge's folded cell %q, want the 5-round row's mean %.4g", got, rows[4].Mean)
	}
}

// A scale group of more than three workloads is titled by its count: the
// legend names them, and a title listing seven took four lines.
func TestDatapathFigureTitleCountsMany(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	var rows []analysis.Row
	for _, dp := range []string{"host", "bridge"} {
		for _, wl := range []string{"tcp", "flows@P1", "flows@P2", "mss@536"} {
			rows = append(rows, dpRow(dp, wl, results.MetricBitrate, 20e9))
		}
		rows = append(rows, dpRow(dp, "udp", results.MetricBitrate, 2e9))
	}
	figs, _ := datapathFigures(s, analysis.Model{Rows: rows})
	if len(figs) != 2 || figs[0].Title != "bitrate by datapath (4 workloads)" || figs[1].Title != "bitrate by datapath (udp)" {
		var titles []string
		for _, f := range figs {
			titles = append(titles, f.Title)
		}
		t.Errorf("figures %q, want bitrate by datapath (4 workloads) and (udp)", titles)
	}
}

// Seed 004 compares its CNIs by HTTP requests (Table II, beside the
// paper's numbers), 1-byte round trips and CPU cost per packet: each gets
// a side-by-side table with the ratio to the first datapath, lower
// better for the latency and the cost, and the HTTP sweep a figure with a
// line per datapath. A one-trial cell shows its bare ratio.
func TestSeed004ComparedAcrossDatapaths(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline", Replicas: []int{1},
		Datapaths: []study.Datapath{{Name: "flannel"}, {Name: "kube-router"}},
		Workloads: []study.Workload{{Name: "http", Tool: "ab", Concurrency: []int{1, 8}}, {Name: "rr", Tool: "qperf"}, {Name: "cpp-inter", Tool: "iperf3"}}}}
	var rows []analysis.Row
	for _, dp := range []string{"flannel", "kube-router"} {
		for _, w := range variantNames(s.Spec.Workloads[0]) {
			rows = append(rows, dpRow(dp, w, results.MetricRequests, 160))
		}
		rows = append(rows, dpRow(dp, "rr", sockperf.MetricMean, 50), dpRow(dp, "cpp-inter", cpp.MetricTotal, 900))
	}
	// kube-router's rr, one trial, and cpp-inter.
	rows[6].Mean, rows[6].N = 60, 1
	rows[6].VsFirstDatapath = analysis.UnpairedOf("flannel", map[int]float64{1: 60}, map[int]float64{1: 50, 2: 50.5, 3: 49.5}, 0.02, stats.LowerIsBetter)
	rows[7].VsFirstDatapath = analysis.UnpairedOf("flannel", map[int]float64{1: 1100, 2: 1110, 3: 1090}, map[int]float64{1: 900, 2: 905, 3: 895}, 0.02, stats.LowerIsBetter)
	published := 91.5
	rows[0].Refs = []int{0}
	m := analysis.Model{Rows: rows, References: []analysis.RefMatch{{Label: "paper",
		Reference: study.Reference{Datapath: "flannel", Workload: "http@c1", Metric: results.MetricRequests, Value: &published}}}}
	tables := datapathTables(s, m)
	byMetric := map[string]table{}
	for _, tb := range tables {
		byMetric[strings.Fields(tb.Head[0])[2]] = tb
	}
	req, ok := byMetric[results.MetricRequests]
	if !ok || len(req.Head) != 3 {
		t.Fatalf("no requests table with a column per concurrency: heads %v", tables)
	}
	if got := req.Rows[0][1]; got != "160 [144, 176] · paper 91.5" {
		t.Errorf("flannel's HTTP cell %q, want the paper's 91.5 beside ours", got)
	}
	if got := byMetric[sockperf.MetricMean].Rows[1][1]; got != "60 (n=1, no CI); ×1.200" {
		t.Errorf("a one-trial round-trip cell %q, want the bare ratio", got)
	}
	if got := byMetric[cpp.MetricTotal].Rows[1][1]; !strings.HasSuffix(got, ": worse") || !strings.Contains(got, "×1.222 [") {
		t.Errorf("kube-router's CPU cost cell %q, want a higher cost judged worse", got)
	}
	figs := sweepsAcrossDatapaths(s, rows)
	if len(figs) != 1 || !strings.HasPrefix(figs[0].Title, results.MetricRequests+" per datapath (http") {
		t.Errorf("figures across datapaths %v, want the HTTP sweep by requests per second", figs)
	}
}

// A sweep drawn across datapaths (a line per datapath) is no bars in the
// datapath figure of its metric, whose palette it crowded; its table
// keeps it.
func TestSweepVariantsNotBarred(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline", Replicas: []int{1},
		Datapaths: []study.Datapath{{Name: "bridge"}, {Name: "macvlan"}},
		Workloads: []study.Workload{{Name: "flows", Tool: "iperf3", Parallels: []int{1, 2}}, {Name: "tcp", Tool: "iperf3"}}}}
	var rows []analysis.Row
	variants := variantNames(s.Spec.Workloads[0])
	for _, dp := range []string{"bridge", "macvlan"} {
		for _, w := range append(variants, "tcp") {
			rows = append(rows, dpRow(dp, w, results.MetricBitrate, 5e9))
		}
	}
	figs, tables := datapathFigures(s, analysis.Model{Rows: rows})
	if len(figs) != 1 || len(tables) != 1 || len(tables[0].Head) != 4 {
		t.Fatalf("%d figures, %d tables (head %v): want the tcp bars alone and a table of all three", len(figs), len(tables), tables[0].Head)
	}
	for _, v := range variants {
		if strings.Contains(string(figs[0].SVG), v) {
			t.Errorf("bars of %s beside its sweep's own figure", v)
		}
	}
}

// A datapath cell says what its comparison rests on, as the normalized
// tables do: a cell given up after 2 trials has too few pairs, so its
// decision is Fieller's, and the cell says "fieller, n=2 vs host's 10"
// rather than leaving the caption's "paired by round" to stand for it;
// its mean carries (n=2) against the 10 planned, as summary.md's header
// promises of every table.
func TestDatapathTableSaysMethodAndCount(t *testing.T) {
	s := &study.Study{Spec: study.Spec{Baseline: "baseline"}}
	host, short := map[int]float64{}, map[int]float64{1: 8e9, 2: 8.2e9}
	for k := 1; k <= 10; k++ {
		host[k] = 10e9 * (1 + 0.01*float64(k%3-1))
	}
	rows := []analysis.Row{dpRow("host", "tcp", results.MetricBitrate, 10e9), dpRow("vxlan", "tcp", results.MetricBitrate, 8.1e9)}
	rows[0].N, rows[1].N = 10, 2
	rows[1].VsFirstDatapath = analysis.PairOf("host", short, host, 0.02, stats.HigherIsBetter)
	if m := rows[1].VsFirstDatapath.Chosen.Method; m != stats.MethodFieller {
		t.Fatalf("two pairs chose %s, want Fieller's", m)
	}
	got := datapathTables(s, analysis.Model{Rows: rows, TrialsPlanned: 10})[0].Rows[1][1]
	if !strings.HasPrefix(got, "8.10 [7.29, 8.91] (n=2); ×0.") || !strings.Contains(got, "fieller, n=2 vs host's 10: ") {
		t.Errorf("vxlan's cell %q, want its (n=2) and the Fieller interval's method and counts", got)
	}
	if got := datapathTables(s, analysis.Model{Rows: rows, TrialsPlanned: 10})[0].Rows[0][1]; strings.Contains(got, "(n=") {
		t.Errorf("host's cell %q ran the planned 10 trials: no mark", got)
	}
	if c := datapathCaption(s, analysis.Model{Rows: rows, TrialsPlanned: 10}); !strings.Contains(c, "at least 3 rounds") || !strings.Contains(c, "(n=K)") {
		t.Errorf("caption %q, want when rounds pair and what (n=K) means", c)
	}
}
