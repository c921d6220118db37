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
)

// csvRecords is summary.csv of rows and stops, read back as records
// (the header first), of a run whose design is not known.
func csvRecords(t *testing.T, rows []Row, stops []results.Stop) [][]string {
	t.Helper()
	return csvRecordsOf(t, rows, stops, study.Trials{})
}

// csvRecordsOf is csvRecords of a run of design trials.
func csvRecordsOf(t *testing.T, rows []Row, stops []results.Stop, trials study.Trials) [][]string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows, stops, trials); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// csvRecord returns the summary.csv record of a tuning's bitrate row at
// one replica as a column-name map.
func csvRecord(t *testing.T, rows []Row, tuning string) map[string]string {
	t.Helper()
	recs := csvRecords(t, rows, nil)
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		if m["tuning"] == tuning && m["replicas"] == "1" && m["metric"] == results.MetricBitrate {
			return m
		}
	}
	t.Fatalf("no %s bitrate record", tuning)
	return nil
}

// TestNormCIWithoutInterval: a tuning with five trials against a baseline
// with one has a ratio but no interval. Neither the report cell nor
// summary.csv may show the collapsed bounds as a zero-width interval, and
// neither may the baseline's own row, whose single trial has no CI.
func TestNormCIWithoutInterval(t *testing.T) {
	c := func(tn string) results.Cell {
		return results.Cell{Datapath: "calico-vxlan", Tuning: tn, Workload: "tcp", Replicas: 1}
	}
	smp := []results.Sample{{Cell: c("baseline"), Trial: 1, Metrics: map[string]float64{results.MetricBitrate: 10e9}}}
	for i, v := range []float64{9e9, 9.5e9, 8.5e9, 9.2e9, 8.8e9} {
		smp = append(smp, results.Sample{Cell: c("rfs"), Trial: i + 1, Metrics: map[string]float64{results.MetricBitrate: v}})
	}
	rows := Summarize(quickStudy(t), smp)
	r := find(t, rows, "rfs", 1, results.MetricBitrate, -1)
	if r.NormMethod != string(stats.MethodNone) || NormHasCI(r) {
		t.Fatalf("rfs: method %q, has CI %v; want none without an interval", r.NormMethod, NormHasCI(r))
	}
	if got := NormCI(r); got != "0.900 (baseline n<2, no CI)" {
		t.Errorf("rfs cell %q, want the ratio with no CI", got)
	}
	rec := csvRecord(t, rows, "rfs")
	if rec["normalized"] != "0.9" || rec["normalized_ci95_low"] != "" || rec["normalized_ci95_high"] != "" {
		t.Errorf("rfs csv normalized %q [%q, %q], want 0.9 and empty bounds", rec["normalized"], rec["normalized_ci95_low"], rec["normalized_ci95_high"])
	}
	b := find(t, rows, "baseline", 1, results.MetricBitrate, -1)
	if got := NormCI(b); got != "1.000 (n=1, no CI)" {
		t.Errorf("baseline cell %q, want 1 with no CI", got)
	}
	if rec := csvRecord(t, rows, "baseline"); rec["normalized_ci95_low"] != "" || rec["normalized_ci95_high"] != "" {
		t.Errorf("baseline csv bounds [%q, %q], want empty", rec["normalized_ci95_low"], rec["normalized_ci95_high"])
	}
	// A row read from a summary.json that names no method is not
	// trusted with an interval either.
	old := r
	old.NormMethod, old.NormCI95Low, old.NormCI95High = "", 0.85, 0.95
	if got := NormCI(old); got != "0.900 (no CI)" {
		t.Errorf("row without a method: %q", got)
	}
}

// TestNormCIWithInterval: with trials on both sides the cell and
// summary.csv keep Fieller's interval.
func TestNormCIWithInterval(t *testing.T) {
	rows := Summarize(quickStudy(t), drifting(6, 1.05))
	r := find(t, rows, "rfs", 1, results.MetricBitrate, -1)
	if got := NormCI(r); !NormHasCI(r) || !strings.Contains(got, "[") {
		t.Errorf("rfs cell %q (method %s), want an interval", got, r.NormMethod)
	}
	rec := csvRecord(t, rows, "rfs")
	if rec["normalized_ci95_low"] == "" || rec["normalized_ci95_high"] == "" {
		t.Errorf("rfs csv lost its interval: %v", rec)
	}
}

// TestPairedColumnsWithoutInterval: with two rounds the paired ratio
// exists but its interval does not (it needs three pairs), and with one
// round no interval is chosen: summary.csv leaves those bounds empty
// instead of writing the point twice.
func TestPairedColumnsWithoutInterval(t *testing.T) {
	rec := csvRecord(t, Summarize(quickStudy(t), drifting(2, 1.05)), "rfs")
	if rec["paired_ratio"] == "" || rec["paired_n"] != "2" || rec["paired_ci95_low"] != "" || rec["paired_ci95_high"] != "" {
		t.Errorf("two rounds: paired %q n %q [%q, %q], want a ratio of 2 pairs without bounds",
			rec["paired_ratio"], rec["paired_n"], rec["paired_ci95_low"], rec["paired_ci95_high"])
	}
	if rec["chosen_method"] != string(stats.MethodFieller) || rec["chosen_low"] == "" || rec["chosen_high"] == "" {
		t.Errorf("two rounds: chosen %q [%q, %q], want Fieller's interval", rec["chosen_method"], rec["chosen_low"], rec["chosen_high"])
	}
	rec = csvRecord(t, Summarize(quickStudy(t), drifting(1, 1.05)), "rfs")
	if rec["chosen_low"] != "" || rec["chosen_high"] != "" || rec["paired_ci95_low"] != "" {
		t.Errorf("one round: chosen [%q, %q], paired low %q; want empty", rec["chosen_low"], rec["chosen_high"], rec["paired_ci95_low"])
	}
}

// TestDisplayScales: what people read (Gbit/s, MiB) from what the files
// keep (bit/s, bytes).
func TestDisplayScales(t *testing.T) {
	for _, c := range []struct {
		metric string
		v      float64
		want   string
	}{
		{results.MetricBitrate, 9.51e9, "9.51 Gbit/s"},
		{"daemons_rss_bytes", 110.6e6, "105.5 MiB"},
		{"snd_cwnd_bytes", 776356, "0.7404 MiB"},
		{"lost_percent", 0.84, "0.8 %"},
		{"rtt_us", 11368.4, "11368 us"},
		{"message_bytes", 64, "64 B"},
		{"mss_bytes", 1460, "1460 B"},
		{"rtt_us", 9999.4, "9999 us"},
		{"rtt_us", 5530.2, "5530 us"},
		{"jitter_ms", 0.0126, "0.0126 ms"},
		{"startup_ms", 1.5e15, "1.5e+15 ms"},
		// Small values keep significant digits: the seed-003 paper's
		// impaired TCP cells carry 0.7 and 32.1 Mbit/s, which two
		// decimals of Gbit/s showed as "0.00" and "0.03".
		{results.MetricBitrate, 7e5, "0.000700 Gbit/s"},
		{results.MetricBitrate, 3.21e7, "0.0321 Gbit/s"},
		{results.MetricBitrate, 9.99e7, "0.0999 Gbit/s"},
		// Its VXLAN and UDP backends at 923.0 and 937.8 Mbit/s: 1 Mbit/s
		// apart below 1 Gbit/s, not "0.92" and "0.94".
		{results.MetricBitrate, 9.230e8, "0.923 Gbit/s"},
		{results.MetricBitrate, 9.378e8, "0.938 Gbit/s"},
		{results.MetricBitrate, 1.2e9, "1.20 Gbit/s"},
		{results.MetricBitrate, 1.553e8, "0.155 Gbit/s"},
		{results.MetricBitrate, 0, "0.00 Gbit/s"},
		{"lost_percent", 0.0001, "0.0001 %"},
		{"lost_percent", 0.096, "0.1 %"},
		{"retransmits", 0.004, "0.004 count"},
		{results.MetricBitrate, 1e-300, "0.000000000000 Gbit/s"},
	} {
		sc := Display(c.metric)
		if got := sc.Format(c.v) + " " + sc.Unit; got != c.want {
			t.Errorf("%s %g: %q, want %q", c.metric, c.v, got, c.want)
		}
	}
}

// TestSummaryCI: a cell's mean with its interval, no interval for one
// trial, and for trials that all gave the same value (a configured
// offered rate, a count that stayed 0) that, not a zero-width interval.
func TestSummaryCI(t *testing.T) {
	gbit := Display("offered_bps")
	for _, tc := range []struct {
		d    stats.Summary
		want string
	}{
		{stats.Summary{}, "missing"},
		{stats.Summary{N: 1, Mean: 1.5e9, CI95Low: 1.5e9, CI95High: 1.5e9}, "1.50 (n=1, no CI)"},
		{stats.Summary{N: 3, Mean: 1.5e9, CI95Low: 1.5e9, CI95High: 1.5e9}, "1.50 (same in all 3 trials)"},
		{stats.Summary{N: 3, Mean: 1.5e9, CI95Low: 1.4e9, CI95High: 1.6e9}, "1.50 [1.40, 1.60]"},
		// A small mean's interval at the mean's decimals.
		{stats.Summary{N: 3, Mean: 1.3e6, CI95Low: 0.7e6, CI95High: 1.9e6}, "0.00130 [0.00070, 0.00190]"},
		{stats.Summary{N: 1, Mean: 7e5, CI95Low: 7e5, CI95High: 7e5}, "0.000700 (n=1, no CI)"},
	} {
		if got := gbit.SummaryCI(tc.d); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
	// A count is a whole number where it is one: one trial's, or the same
	// in every trial; a mean of several keeps its decimal.
	count := Display("retransmits")
	for _, tc := range []struct {
		d    stats.Summary
		want string
	}{
		{stats.Summary{N: 1, Mean: 142}, "142 (n=1, no CI)"},
		{stats.Summary{N: 3}, "0 (same in all 3 trials)"},
		{stats.Summary{N: 2, Mean: 141.5, CI95Low: 135.1, CI95High: 147.9}, "141.5 [135.1, 147.9]"},
	} {
		if got := count.SummaryCI(tc.d); got != tc.want {
			t.Errorf("count %+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// A published number keeps the digits its source gave, in display units.
func TestPublished(t *testing.T) {
	for _, c := range []struct {
		metric string
		v      float64
		want   string
	}{
		{"requests_per_s", 91.5, "91.5"},        // Format: "92"
		{"bitrate", 11.1e9, "11.1"},             // Format: "11.10"; factor 1e-9 leaves 11.100000000000001
		{"iptables_path_rules_count", 21, "21"}, // Format: "21.0"
		{"core_idle", 60, "60"},
		{"pod_setup_ms", 0.06, "0.06"},
		{"rtt_us", 1.5e7, "15000000"},
		// Seven digits and more as given: Table II's 3168.911 ms read
		// "3168.91" at six; 12345678.5 lost its decimal from 10^6 on.
		{"latency_mean_ms", 3168.911, "3168.911"},
		{"rtt_us", 12345678.5, "12345678.5"},
		{"bitrate", 1.2345678e9, "1.2345678"},
		{"bitrate", 9.23e8, "0.923"},
		{"bitrate", math.NaN(), "—"},
	} {
		if got := Display(c.metric).Published(c.v); got != c.want {
			t.Errorf("Published(%s, %g) = %q, want %q", c.metric, c.v, got, c.want)
		}
	}
	// A factor no power of ten adds digits to the source's: six of them.
	if got := ScaleOf("B").Published(1.5e6); got != "1.43051" {
		t.Errorf("Published(B, 1.5e6) = %q, want 1.43051", got)
	}
	// A published normalized value as given: rps-rfs's 1.085 (the middle
	// of "around 8 - 9%"), which two decimals read as 1.08.
	for v, want := range map[float64]string{1.085: "1.085", 1.24: "1.24", 1: "1"} {
		if got := PublishedNormalized(v); got != want {
			t.Errorf("PublishedNormalized(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestZeroOneWay: a zero (a mean, a bound raised to 0) reads the same in
// every row of a column, at the scale's own decimals as its ordinary
// values are, not at the extra ones a small mean gives its bounds: a
// softirqs/s column read "0.3 [0.0, 0.9]" beside "1500 [0, 3200]", a
// count column "103.5 [0.0, 254.4]" beside "0 (same in all 3 trials)".
func TestZeroOneWay(t *testing.T) {
	for _, tc := range []struct {
		metric string
		d      stats.Summary
		want   string
	}{
		{results.MetricCoreNetRx, stats.Summary{N: 3, Mean: 0.3, CI95High: 0.9}, "0.3 [0, 0.9]"},
		{results.MetricCoreNetRx, stats.Summary{N: 3, Mean: 1500, CI95High: 3200}, "1500 [0, 3200]"},
		{results.MetricCoreNetRx, stats.Summary{N: 1}, "0 (n=1, no CI)"},
		{"retransmits", stats.Summary{N: 3, Mean: 103.5, CI95High: 254.4}, "103.5 [0, 254.4]"},
		{"retransmits", stats.Summary{N: 3}, "0 (same in all 3 trials)"},
		{"lost_percent", stats.Summary{N: 3, Mean: 0.03, CI95High: 0.08}, "0.03 [0.0, 0.08]"},
		{"lost_percent", stats.Summary{N: 3, Mean: 1.5, CI95High: 3.9}, "1.5 [0.0, 3.9]"},
		{"lost_percent", stats.Summary{N: 3}, "0.0 (same in all 3 trials)"},
		{results.MetricBitrate, stats.Summary{N: 3, Mean: 7e5, CI95High: 1.5e6}, "0.000700 [0.00, 0.001500]"},
		{results.MetricBitrate, stats.Summary{N: 3, Mean: 5e9, CI95High: 12e9}, "5.00 [0.00, 12.00]"},
		{"rtt_us", stats.Summary{N: 3, Mean: 12.34, CI95High: 30.12}, "12.34 [0, 30.12]"},
		// Four significant digits of the mean for all three, the
		// half-width's where it is larger; whole from 10^4 on.
		{"rtt_us", stats.Summary{N: 3, Mean: 50.5, CI95Low: 45.55, CI95High: 55.45}, "50.50 [45.55, 55.45]"},
		{"rtt_us", stats.Summary{N: 3, Mean: 0.001, CI95Low: -5.2, CI95High: 5.202}, "0.001 [-5.200, 5.202]"},
		{"rtt_us", stats.Summary{N: 3, Mean: 12345.6, CI95Low: 12001.2, CI95High: 12690}, "12346 [12001, 12690]"},
		{"rtt_us", stats.Summary{N: 3, Mean: 9.99996, CI95Low: 9.9, CI95High: 10.1}, "10.00 [9.90, 10.10]"},
		{"mem_bytes", stats.Summary{N: 3, Mean: 105.5 * (1 << 20), CI95Low: 100 * (1 << 20), CI95High: 111 * (1 << 20)}, "105.5 [100.0, 111.0]"},
	} {
		if got := Display(tc.metric).SummaryCI(tc.d); got != tc.want {
			t.Errorf("%s %+v: %q, want %q", tc.metric, tc.d, got, tc.want)
		}
	}
	if got := Display("lost_percent").Format(math.Copysign(0, -1)); got != "0.0" {
		t.Errorf("-0 %%: %q, want 0.0", got)
	}
	if got := Display("retransmits").Format(0); got != "0" {
		t.Errorf("a count's 0: %q, want 0 as its whole values", got)
	}
}
