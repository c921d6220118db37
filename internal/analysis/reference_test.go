package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// TestRefMatchesWorkload: a reference naming a workload matches each
// variant of its sweep; one naming a variant matches only that one.
func TestRefMatchesWorkload(t *testing.T) {
	row := func(w string) results.SummaryRow {
		return results.SummaryRow{Cell: results.Cell{Datapath: "flannel-udp", Tuning: "baseline", Workload: w, Replicas: 1}, Metric: "bitrate"}
	}
	all := study.Reference{Workload: "udp", Metric: "bitrate"}
	one := study.Reference{Workload: "udp@500M", Metric: "bitrate"}
	for _, tc := range []struct {
		ref  study.Reference
		row  string
		want bool
	}{
		{all, "udp", true}, {all, "udp@500M", true}, {all, "udp@1500M", true}, {all, "udp-intra", false}, {all, "tcp", false},
		{one, "udp@500M", true}, {one, "udp@1500M", false}, {one, "udp", false},
		{study.Reference{Metric: "bitrate"}, "anything", true},
	} {
		if got := RefMatches(tc.ref, row(tc.row)); got != tc.want {
			t.Errorf("reference workload %q vs row %q: %v, want %v", tc.ref.Workload, tc.row, got, tc.want)
		}
	}
}

// TestRefRatio: a ratio reference is our mean at its datapath over our
// mean at the same point of the datapath it names.
func TestRefRatio(t *testing.T) {
	row := func(dp, w string, mean float64) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: "transactions_per_s", CPU: -1, N: 5, Mean: mean}}
	}
	rows := []Row{row("bridge", "rr-chc", 1000), row("macvlan", "rr-chc", 1300), row("macvlan", "rr-chhc", 900)}
	r := 1.3163
	m := matchReferences([]study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}, rows, nil, nil, nil, 0)[0]
	if len(m.Rows) != 2 || len(m.RatioRows) != 1 || m.RatioLow != 1.3 || m.RatioHigh != 1.3 {
		t.Errorf("match %+v: want the rr-chc row's ratio 1.3 only (rr-chhc has no bridge row)", m)
	}
}

// ratioFixture is macvlan against bridge in transactions/s, three rounds
// each, about 1.3 apart.
func ratioFixture() ([]Row, rounds) {
	row := func(dp string, mean float64) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "rr", Replicas: 1},
			Metric: "transactions_per_s", CPU: -1, N: 3, Mean: mean}}
	}
	rows := []Row{row("bridge", 1000), row("macvlan", 1300)}
	return rows, rounds{RowKey(rows[0]): {1: 990, 2: 1000, 3: 1010}, RowKey(rows[1]): {1: 1290, 2: 1300, 3: 1310}}
}

// TestRefRatioInterval: with trials on both sides the ratio reference
// carries Fieller's interval, which covers the ratio of means.
func TestRefRatioInterval(t *testing.T) {
	rows, rs := ratioFixture()
	r := 1.3163
	m := matchReferences([]study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}, rows, rs, nil, nil, 0)[0]
	if m.RatioCI == nil {
		t.Fatal("no interval for a ratio with three trials on each side")
	}
	u := m.RatioCI.Unpaired
	if u.Method == "none" || !(u.Low < 1.3 && 1.3 < u.High) || u.High-u.Low > 0.1 {
		t.Errorf("interval %+v: want a tight interval around 1.3", u)
	}
	if m.RatioCI.Paired.N != 0 || m.RatioCI.Chosen.Method != stats.MethodFieller {
		t.Errorf("datapaths not in shared rounds paired: %+v", m.RatioCI)
	}
	// The same datapaths in shared rounds: paired round by round, and
	// tighter, since both sides moved together.
	p := matchReferences([]study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}, rows, rs, nil, map[int]bool{1: true}, 0)[0]
	if c := p.RatioCI; c == nil || c.Paired.N != 3 || c.Chosen.Method != stats.MethodPairedT || !(c.Chosen.High-c.Chosen.Low < u.High-u.Low) {
		t.Errorf("shared rounds: %+v, want paired-t on 3 pairs, narrower than Fieller's", c)
	}
}

// TestRefRatioJSONRoundTrip: summary.json carries the ratio rows, their
// span and the interval the reports show, and reads them back; a file
// written before these fields existed reads as no ratio.
func TestRefRatioJSONRoundTrip(t *testing.T) {
	rows, rs := ratioFixture()
	r := 1.3163
	m := Model{Version: ModelVersion, References: matchReferences([]study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}, rows, rs, nil, nil, 0)}
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"ratio_rows"`, `"ratio_low"`, `"ratio_high"`, `"ratio_ci"`} {
		if !strings.Contains(b.String(), f) {
			t.Errorf("summary.json lacks %s:\n%s", f, b.String())
		}
	}
	back, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	w, g := m.References[0], back.References[0]
	if len(g.RatioRows) != 1 || g.RatioRows[0] != w.RatioRows[0] || g.RatioLow != w.RatioLow || g.RatioHigh != w.RatioHigh {
		t.Errorf("ratio read back as rows %v [%v, %v], want %v [%v, %v]", g.RatioRows, g.RatioLow, g.RatioHigh, w.RatioRows, w.RatioLow, w.RatioHigh)
	}
	if g.RatioCI == nil || g.RatioCI.Unpaired.Low != w.RatioCI.Unpaired.Low || g.RatioCI.Unpaired.High != w.RatioCI.Unpaired.High ||
		g.RatioCI.Unpaired.Method != w.RatioCI.Unpaired.Method {
		t.Errorf("ratio interval read back as %+v, want %+v", g.RatioCI, w.RatioCI)
	}
	old, err := ReadJSON(strings.NewReader(`{"version": 1, "references": [{"reference": {"metric": "bitrate"}, "label": "paper", "mean_low": 1, "mean_high": 2, "norm_low": null, "norm_high": null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if o := old.References[0]; len(o.RatioRows) != 0 || !math.IsNaN(o.RatioLow) || !math.IsNaN(o.RatioHigh) || o.RatioCI != nil {
		t.Errorf("a file without ratio fields read as rows %v [%v, %v], interval %v; want none and NaN", o.RatioRows, o.RatioLow, o.RatioHigh, o.RatioCI)
	}
}

// TestRefRatioAgainstWorkload: a ratio may divide by another workload at
// the same datapath (seed 001's NUMA penalty), one ratio per datapath.
func TestRefRatioAgainstWorkload(t *testing.T) {
	row := func(dp, w string, mean float64) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: "bitrate", CPU: -1, N: 5, Mean: mean}}
	}
	rows := []Row{row("bridge", "numa-same", 10), row("bridge", "numa-other", 2), row("macvlan", "numa-same", 10), row("macvlan", "numa-other", 4)}
	r := 0.2201
	m := matchReferences([]study.Reference{{Workload: "numa-other", AgainstWorkload: "numa-same", Metric: "bitrate", Ratio: &r}}, rows, nil, nil, nil, 0)[0]
	if len(m.RatioRows) != 2 || m.RatioLow != 0.2 || m.RatioHigh != 0.4 {
		t.Errorf("match %+v: want bridge's 0.2 and macvlan's 0.4", m)
	}
}

// A reference no row matches says which part of its point the run has no
// data for, by RefMatches' own rules (a workload names its variants too);
// a ratio without its denominator says the same of that point.
func TestRefMissing(t *testing.T) {
	row := func(dp, w string) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: "transactions_per_s", CPU: -1, N: 3, Mean: 1000}}
	}
	ns := row("bridge", "cpp-intra")
	ns.Metric = "cpp_bridge_ns"
	core := row("bridge", "rr-chc")
	core.Metric, core.CPU = "core_idle", 1
	rows := []Row{row("macvlan", "rr-chc"), row("bridge", "rr-chc"), row("bridge", "udp@500M"), ns, core}
	r := 1.08
	cpu3 := 3
	for _, c := range []struct {
		ref               study.Reference
		missing, ratioMis string
	}{
		{study.Reference{Datapath: "ovs", Workload: "flows-chc", Metric: "bitrate"}, "no datapath ovs", ""},
		{study.Reference{Datapath: "macvlan", Workload: "flows-chc", Metric: "bitrate"}, "no workload flows-chc", ""},
		{study.Reference{Workload: "udp", Replicas: 16, Metric: "bitrate"}, "nothing at 16 replica(s)", ""},
		{study.Reference{Workload: "rr-chc", Impairment: "none", Metric: "rtt_p99_us"}, "", ""},
		// seed 000's core 3 on a machine of 2 CPUs.
		{study.Reference{Workload: "rr-chc", Metric: "core_idle", CPU: &cpu3}, "no cpu 3 here (the paper's per-core numbers are of its machine's cores)", ""},
		{study.Reference{Datapath: "macvlan", Workload: "rr-chc", Metric: "transactions_per_s", Ratio: &r, Against: "ovs"}, "", "no datapath ovs"},
		// seed 004's cycles per packet where perf sampled cpu-clock: the
		// run has the component in ns, which is not the paper's unit.
		{study.Reference{Datapath: "bridge", Workload: "cpp-intra", Metric: "cpp_bridge_cycles"}, "it in ns of CPU time (perf could sample only cpu-clock here), not the paper's hardware cycles", ""},
		{study.Reference{Datapath: "bridge", Workload: "cpp-intra", Metric: "cpp_veth_cycles"}, "", ""},
	} {
		m := matchReferences([]study.Reference{c.ref}, rows, nil, nil, nil, 0)[0]
		if m.Missing != c.missing || m.RatioMissing != c.ratioMis {
			t.Errorf("%+v: missing %q, ratio %q; want %q, %q", c.ref, m.Missing, m.RatioMissing, c.missing, c.ratioMis)
		}
	}
}

// TestRefRatioDecidedAtMargin: a reference ratio's interval is decided at
// the study's margin, as every other comparison in the summary is: a
// ratio within 1% on tight trials is equal at ±5%, and at no margin it
// could never be.
func TestRefRatioDecidedAtMargin(t *testing.T) {
	rows, rs := ratioFixture()
	rows[1].Mean = 1010
	rs[RowKey(rows[1])] = map[int]float64{1: 1000, 2: 1010, 3: 1020}
	r := 1.3163
	ref := []study.Reference{{Datapath: "macvlan", Against: "bridge", Metric: "transactions_per_s", Ratio: &r}}
	if c := matchReferences(ref, rows, rs, nil, map[int]bool{1: true}, 0.05)[0].RatioCI; c == nil || c.Decision.Verdict != stats.Equal {
		t.Errorf("at ±5%%: %+v, want equal", c)
	}
	if c := matchReferences(ref, rows, rs, nil, map[int]bool{1: true}, 0)[0].RatioCI; c == nil || c.Decision.Verdict == stats.Equal {
		t.Errorf("at no margin: %+v, equal cannot be", c)
	}
}

// TestBuildDecidesRefRatioAtMargin: Build decides a reference's ratio at
// the study's margin (summary.json's references[].ratio_ci.decision).
func TestBuildDecidesRefRatioAtMargin(t *testing.T) {
	r, margin := 1.3163, study.Percent(0.05)
	s := &study.Study{Spec: study.Spec{Datapaths: []study.Datapath{{Name: "bridge"}, {Name: "macvlan"}}, Tunings: []study.Tuning{{Name: "baseline"}},
		Workloads: []study.Workload{{Name: "rr"}}, Replicas: []int{1}, Trials: study.Fixed(3), Baseline: "baseline", Margin: &margin,
		Reference: []study.Reference{{Datapath: "macvlan", Against: "bridge", Workload: "rr", Metric: "transactions_per_s", Ratio: &r}}}}
	var samples []results.Sample
	start := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	for k := 1; k <= 3; k++ {
		for i, dp := range []string{"bridge", "macvlan"} {
			at := start.Add(time.Duration(10*k+i) * time.Second)
			samples = append(samples, results.Sample{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: "rr", Replicas: 1},
				Trial: k, Start: at, End: at.Add(time.Second), Metrics: map[string]float64{"transactions_per_s": 1000 + 10*float64(k) + float64(i)}})
		}
	}
	m := Build(s, samples)
	if len(m.References) != 1 || m.References[0].RatioCI == nil || m.References[0].RatioCI.Decision.Verdict != stats.Equal {
		t.Fatalf("references %+v, want the ratio decided equal at ±5%%", m.References)
	}
}

// TestRefDifference: a difference reference is our mean at its point
// less our mean at the same point of its other workload (seed 004's one
// background connection against none), one per datapath where it names
// none, the first with Welch's interval from both rows' trials; a
// datapath without the other point says which part is missing, and
// summary.json carries the differences and reads them back.
func TestRefDifference(t *testing.T) {
	row := func(dp, w string, mean float64) Row {
		return Row{SummaryRow: results.SummaryRow{Cell: results.Cell{Datapath: dp, Tuning: "baseline", Workload: w, Replicas: 1},
			Metric: "bitrate", CPU: -1, N: 3, Mean: mean}}
	}
	rows := []Row{row("flannel", "bg-intra@bg0", 40e9), row("flannel", "bg-intra@bg1", 38e9),
		row("cilium", "bg-intra@bg0", 50e9), row("cilium", "bg-intra@bg1", 49e9)}
	rs := rounds{RowKey(rows[0]): {1: 39.6e9, 2: 40e9, 3: 40.4e9}, RowKey(rows[1]): {1: 37.6e9, 2: 38e9, 3: 38.4e9}}
	d := -2e9
	ref := study.Reference{Workload: "bg-intra@bg1", AgainstWorkload: "bg-intra@bg0", Metric: "bitrate", Difference: &d}
	m := matchReferences([]study.Reference{ref}, rows, rs, nil, nil, 0)[0]
	if len(m.DiffRows) != 2 || m.DiffLow != -2e9 || m.DiffHigh != -1e9 || len(m.RatioRows) != 0 {
		t.Errorf("match %+v: want flannel's -2e9 and cilium's -1e9, no ratio", m)
	}
	if !(m.DiffCILow < -2e9 && -2e9 < m.DiffCIHigh && m.DiffCIHigh < 0) {
		t.Errorf("interval [%v, %v]: want Welch's around flannel's -2e9, below 0", m.DiffCILow, m.DiffCIHigh)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, Model{Version: ModelVersion, References: []RefMatch{m}}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if g := back.References[0]; len(g.DiffRows) != 2 || g.DiffLow != m.DiffLow || g.DiffHigh != m.DiffHigh || g.DiffCILow != m.DiffCILow ||
		g.DiffCIHigh != m.DiffCIHigh || g.Reference.Difference == nil || *g.Reference.Difference != d {
		t.Errorf("read back as %+v, want %+v", g, m)
	}
	old, err := ReadJSON(strings.NewReader(`{"version": 1, "references": [{"reference": {"metric": "bitrate"}, "label": "paper", "mean_low": 1, "mean_high": 2, "norm_low": null, "norm_high": null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if o := old.References[0]; len(o.DiffRows) != 0 || !math.IsNaN(o.DiffLow) || !math.IsNaN(o.DiffCILow) {
		t.Errorf("a file without difference fields read as rows %v [%v, %v]; want none and NaN", o.DiffRows, o.DiffLow, o.DiffCILow)
	}
	gone := matchReferences([]study.Reference{ref}, rows[1:2], rs, nil, nil, 0)[0]
	if len(gone.DiffRows) != 0 || gone.RatioMissing != "no workload bg-intra@bg0" {
		t.Errorf("without the point it subtracts: %+v, want no difference and the missing workload named", gone)
	}
}
