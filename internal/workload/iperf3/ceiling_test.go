package iperf3

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

// argAfter returns the value after flag in argv ("" when absent).
func argAfter(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// The search's probes go through the driver's own run (servers, clients,
// the receiver's window), the measured trial then runs at the rate found,
// and the sample gets the rate, its loss, the probe count and the steps.
// The fake link's server answers the n-th start with a lossless or a
// lossy report (26% loss) in a fixed pattern; with low 1M, high 9M and
// step 1M the bisection offers 9M (lossy), 1M, 5M, 7M (lossy), 6M and
// finds 6M.
func TestLossCeilingPlumbing(t *testing.T) {
	clean := readTestdata(t, "udp-server.json")
	lossy := []byte(strings.ReplaceAll(string(clean), "\"lost_packets\":\t0,", "\"lost_packets\":\t100,"))
	pattern := []bool{false, true, true, false, true, true} // pass? per server start; the last is the measured trial
	server := func(n int, _ []string) ([]byte, bool, error) {
		if n > len(pattern) || pattern[n-1] {
			return clean, false, nil
		}
		return lossy, false, nil
	}
	p0, _, c0 := pair(0, server, fixed(t, "udp-client.json"))
	tr := trial(p0)
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Length: "1400", LossCeiling: "3%",
		CeilingSearch: &study.CeilingSearch{Low: "1M", High: "9M", Step: "1M", Probe: study.Duration{Duration: time.Second}}}
	var started int
	tr.Started = func(time.Time) { started++ }
	res, err := fastDriver().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	var rates, secs, omits []string
	for _, a := range c0.starts() {
		rates = append(rates, argAfter(a, "-b"))
		secs = append(secs, argAfter(a, "-t"))
		omits = append(omits, argAfter(a, "-O"))
	}
	if want := []string{"9000000", "1000000", "5000000", "7000000", "6000000", "6000000"}; !slices.Equal(rates, want) {
		t.Errorf("offered rates %v, want %v", rates, want)
	}
	// Probes are -t 1 -O 0; the measured trial keeps the study's window.
	if want := []string{"1", "1", "1", "1", "1", "2"}; !slices.Equal(secs, want) {
		t.Errorf("-t per start %v, want %v", secs, want)
	}
	if want := []string{"0", "0", "0", "0", "0", "1"}; !slices.Equal(omits, want) {
		t.Errorf("-O per start %v, want %v", omits, want)
	}
	if started != 1 {
		t.Errorf("Started called %d times, want once (the measured trial only)", started)
	}
	m := res.Metrics
	if m[MetricCeilingRate] != 6e6 || m[MetricCeilingProbes] != 5 || m[MetricCeilingPct] != 3 || m[MetricCeilingAtHigh] != 0 {
		t.Errorf("ceiling metrics %v", m)
	}
	if m[MetricCeilingLoss] >= 3 || m[MetricOffered] != 6e6 {
		t.Errorf("found loss %v (want < 3), offered %v (want 6e6)", m[MetricCeilingLoss], m[MetricOffered])
	}
	s := res.Series[0]
	if !slices.Equal(s[SeriesProbeRate], []float64{9e6, 1e6, 5e6, 7e6, 6e6}) || len(s[SeriesProbeLoss]) != 5 || !(s[SeriesProbeLoss][0] > 3) {
		t.Errorf("steps: rates %v losses %v", s[SeriesProbeRate], s[SeriesProbeLoss])
	}
	// Each probe's sent rate is its client's sum_sent over its streams
	// (the fixture's 99.96 Mbit/s, more than asked: nobody fell behind).
	if got := s[SeriesProbeSent]; len(got) != 5 || slices.ContainsFunc(got, func(v float64) bool { return v != 99963045.776784 }) {
		t.Errorf("sent per probe %v, want the fixture's 99963045.776784 five times", got)
	}
	if len(res.Warnings) != 0 || m[MetricCeilingSenderBound] != 0 {
		t.Errorf("senders that kept up: warnings %q, sender-bound %v", res.Warnings, m[MetricCeilingSenderBound])
	}
}

// Where the sender says what it sent (pktgen), the steps carry it beside
// the rate asked.
func TestCeilingSentSeries(t *testing.T) {
	res := workload.Result{Metrics: map[string]float64{}}
	addCeiling(&res, study.Ceiling{Pct: 3, Sender: study.SenderPktgen}, ceiling.Result{Rate: 4e6, Steps: []ceiling.Step{{Rate: 8e6, LossPct: 30, Sent: 6e6}, {Rate: 4e6, Sent: 4e6, Pass: true}}})
	if got := res.Series[0][SeriesProbeSent]; !slices.Equal(got, []float64{6e6, 4e6}) {
		t.Errorf("sent series %v, want [6e6 4e6]", got)
	}
	// The first probe sent 75% of its rate: the sender fell behind, and
	// the trial says so once.
	if !slices.Equal(res.Warnings, []string{pktgenBehind}) {
		t.Errorf("warnings %q, want the pktgen-behind one", res.Warnings)
	}
	kept := workload.Result{Metrics: map[string]float64{}}
	addCeiling(&kept, study.Ceiling{Pct: 3, Sender: study.SenderPktgen}, ceiling.Result{Rate: 4e6, Steps: []ceiling.Step{{Rate: 8e6, LossPct: 30, Sent: 7.9e6}, {Rate: 4e6, Sent: 4e6, Pass: true}}})
	if len(kept.Warnings) != 0 {
		t.Errorf("a sender at 99%% of its rate warned: %q", kept.Warnings)
	}
}

// A probe's sent metric sums a pair's streams; the search compares it
// with its rate per stream: two pktgen streams that each kept 40 Mbit/s
// of 40 asked are not behind, and two that sent 30 each are, at 30 (not
// 60). A probe without a loss is an error.
func TestProbeOutcomePerStream(t *testing.T) {
	for _, c := range []struct {
		key      string
		sent     float64
		parallel int
		want     float64
		behind   bool
	}{
		{MetricSent, 80e6, 2, 40e6, false},
		{MetricSent, 60e6, 2, 30e6, true},
		{MetricSent, 40e6, 1, 40e6, false},
		{MetricSenderBitrate, 60e6, 2, 30e6, true},
		{MetricSenderBitrate, 40e6, 0, 40e6, false},
	} {
		o, err := probeOutcome(map[string]float64{MetricLostPct: 1.5, c.key: c.sent}, c.key, c.parallel)
		if err != nil || o.LossPct != 1.5 || o.Sent != c.want {
			t.Errorf("%s %g over %d streams: %+v %v, want sent %g per stream", c.key, c.sent, c.parallel, o, err, c.want)
		}
		if step := (ceiling.Step{Rate: 40e6, Sent: o.Sent}); step.Behind() != c.behind {
			t.Errorf("%s %g over %d streams asked 40M each: behind %v", c.key, c.sent, c.parallel, step.Behind())
		}
	}
	if _, err := probeOutcome(map[string]float64{MetricSent: 1}, MetricSent, 1); err == nil {
		t.Error("a probe without loss accepted")
	}
}

// A pair that sent less than 97% of the rate asked fell behind; one at
// 97% or more did not, and a pair without the sent metric does not say.
func TestFellBehind(t *testing.T) {
	for _, c := range []struct {
		per   []map[string]float64
		asked float64
		want  bool
	}{
		{[]map[string]float64{{MetricSent: 62.86e6}}, 80e6, true},
		{[]map[string]float64{{MetricSent: 79e6}, {MetricSent: 70e6}}, 80e6, true},
		{[]map[string]float64{{MetricSent: 77.6e6}}, 80e6, false},
		{[]map[string]float64{{MetricSent: 0}}, 0, false},
		{[]map[string]float64{{MetricSenderBitrate: 50e6}}, 80e6, false},
	} {
		if got := fellBehind(c.per, MetricSent, c.asked); got != c.want {
			t.Errorf("%v of %g: fell behind %v, want %v", c.per, c.asked, got, c.want)
		}
	}
}

// An iperf3 search whose passing probe fell behind records the ceiling as
// sender-bound and warns with iperf3's words.
func TestCeilingSenderBoundMetrics(t *testing.T) {
	res := workload.Result{Metrics: map[string]float64{}}
	r := ceiling.Result{Rate: 720e6, AtHigh: true, SenderBound: true, Steps: []ceiling.Step{{Rate: 4e9, LossPct: 0.4, Sent: 720e6, Pass: true}}}
	addCeiling(&res, study.Ceiling{Pct: 3, Sender: study.SenderIperf3}, r)
	if res.Metrics[MetricCeilingSenderBound] != 1 || res.Metrics[MetricCeilingRate] != 720e6 || res.Metrics[MetricCeilingAtHigh] != 1 {
		t.Errorf("metrics %v: want the sender-bound 720 Mbit/s at high", res.Metrics)
	}
	if !slices.Equal(res.Warnings, []string{iperf3Behind}) {
		t.Errorf("warnings %q, want iperf3's", res.Warnings)
	}
	kept := workload.Result{Metrics: map[string]float64{}}
	addCeiling(&kept, study.Ceiling{Pct: 3}, ceiling.Result{Rate: 4e9, AtHigh: true, Steps: []ceiling.Step{{Rate: 4e9, Sent: 3.99e9, Pass: true}}})
	if kept.Metrics[MetricCeilingSenderBound] != 0 || len(kept.Warnings) != 0 {
		t.Errorf("a sender that kept up: %v %q", kept.Metrics, kept.Warnings)
	}
}

// Every probe lossy: the search fails with ErrNoPassingRate after high
// and low, and no measured trial runs.
func TestLossCeilingNoPassingRate(t *testing.T) {
	lossy := []byte(strings.ReplaceAll(string(readTestdata(t, "udp-server.json")), "\"lost_packets\":\t0,", "\"lost_packets\":\t100,"))
	p0, _, c0 := pair(0, func(int, []string) ([]byte, bool, error) { return lossy, false, nil }, fixed(t, "udp-client.json"))
	tr := trial(p0)
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", LossCeiling: "3%",
		CeilingSearch: &study.CeilingSearch{Low: "1M", High: "9M", Step: "1M", Probe: study.Duration{Duration: time.Second}}}
	_, err := fastDriver().Run(context.Background(), tr)
	if !errors.Is(err, ceiling.ErrNoPassingRate) {
		t.Fatalf("error %v, want ErrNoPassingRate", err)
	}
	if n := len(c0.starts()); n != 2 {
		t.Errorf("%d client starts, want 2 (high, low)", n)
	}
}

// The pktgen sender drives the kernel in the pods' namespaces: pods that
// are not namespaces of this machine are refused, and no iperf3 client
// runs.
func TestLossCeilingPktgenNeedsLocalPods(t *testing.T) {
	p0, _, c0 := pair(0, fixed(t, "udp-server.json"), fixed(t, "udp-client.json"))
	tr := trial(p0)
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", LossCeiling: "3%", CeilingSearch: &study.CeilingSearch{Sender: study.SenderPktgen}}
	if _, err := fastDriver().Run(context.Background(), tr); err == nil || !strings.Contains(err.Error(), "local engine only") {
		t.Errorf("error %v, want the local-engine refusal", err)
	}
	if len(c0.starts()) != 0 {
		t.Error("a client started")
	}
}

func TestMSSArgv(t *testing.T) {
	p0, _, c0 := pair(0, fixed(t, "tcp-server.json"), fixed(t, "tcp-client.json"))
	tr := trial(p0)
	tr.Spec.MSS = 536
	res, err := fastDriver().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if got := argAfter(c0.starts()[0], "-M"); got != "536" {
		t.Errorf("-M %q, want 536", got)
	}
	if res.Metrics[MetricMSS] != 536 {
		t.Errorf("mss_bytes %v", res.Metrics[MetricMSS])
	}
	tr.Spec.Protocol = "udp"
	tr.Spec.Rate = "1M"
	if _, err := fastDriver().Run(context.Background(), tr); err == nil || !strings.Contains(err.Error(), "TCP only") {
		t.Errorf("UDP with mss: %v", err)
	}
}

// The workload's own pktgen sender at a set rate takes the pktgen path
// too (no iperf3 client starts) and needs the local engine's pods.
func TestPktgenAtRateNeedsLocalPods(t *testing.T) {
	p0, _, c0 := pair(0, fixed(t, "udp-server.json"), fixed(t, "udp-client.json"))
	tr := trial(p0)
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Rate: "500M", Sender: study.SenderPktgen}
	if _, err := fastDriver().Run(context.Background(), tr); err == nil || !strings.Contains(err.Error(), "local engine only") {
		t.Errorf("error %v, want the local-engine refusal", err)
	}
	if len(c0.starts()) != 0 {
		t.Error("a client started")
	}
}
