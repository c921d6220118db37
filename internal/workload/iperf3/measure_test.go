package iperf3

import (
	"math"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// udpPair is the captured UDP test's server and client reports.
func udpPair(t *testing.T) (*Server, *Client) {
	t.Helper()
	s, err := ParseServer(readTestdata(t, "udp-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseClient(readTestdata(t, "udp-client.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestPairMetricsUDP(t *testing.T) {
	s, c := udpPair(t)
	m, series, err := pairMetrics(s, c)
	if err != nil {
		t.Fatal(err)
	}
	// Loss % must be exactly lost/total of the same measured window.
	if m[MetricPackets] <= 0 || m[MetricLostPct] != 100*m[MetricLost]/m[MetricPackets] {
		t.Errorf("loss %v%% of %v lost / %v packets", m[MetricLostPct], m[MetricLost], m[MetricPackets])
	}
	if !(m[MetricJitter] > 0 && m[MetricJitter] < 1) {
		t.Errorf("jitter %v ms", m[MetricJitter])
	}
	if _, ok := m[MetricOutOfOrder]; !ok {
		t.Error("no out-of-order count")
	}
	if br := m[results.MetricBitrate]; math.Abs(br-s.Bitrate) > 1e-6*br {
		t.Errorf("receiver bitrate %v, server measured %v", br, s.Bitrate)
	}
	if _, ok := m[MetricCwnd]; ok {
		t.Error("UDP has no cwnd")
	}
	if len(series[SeriesBitrate]) != 3 {
		t.Errorf("bitrate series %v", series[SeriesBitrate])
	}
}

// Nothing arrived: the receiver saw no sequence gap and says 0 of 0
// lost; the client's sent count makes it all lost (a loss-ceiling probe
// at a rate that drops everything must not pass).
func TestPairMetricsUDPAllLost(t *testing.T) {
	s, c := udpPair(t)
	if c.SentPackets != 1144 {
		t.Fatalf("sent packets %v, want the fixture's 1144", c.SentPackets)
	}
	for i := range s.Intervals {
		if u := s.Intervals[i].UDP; u != nil {
			u.Packets, u.LostPackets, u.LostPercent = 0, 0, 0
		}
	}
	m, _, err := pairMetrics(s, c)
	if err != nil {
		t.Fatal(err)
	}
	if m[MetricLostPct] != 100 || m[MetricLost] != 1144 || m[MetricPackets] != 1144 {
		t.Errorf("nothing received: lost %v%% (%v of %v), want 100%% of 1144", m[MetricLostPct], m[MetricLost], m[MetricPackets])
	}
}

// With -R the client receives: a reverse UDP test that got nothing saw
// no gap in sequence numbers and reports 0 of 0 lost, and the sender (the
// server) says what it sent. Before, the client's count was taken only
// without -R, so a reverse loss-ceiling probe at a rate that dropped
// everything passed at 0% loss. The count is the server's measured
// intervals' (114), not the client's end.sum_sent.packets (153), which
// iperf3 fills with the server's count warm-up included.
func TestPairMetricsReverseUDPAllLost(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		lostPct, sent, recvd, window float64
	}{
		{"udp-reverse", 0, 1144, 1144, 1144},
		{"udp-reverse-none", 100, 153, 0, 114},
	} {
		s, err := ParseServer(readTestdata(t, tc.name+"-server.json"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseClient(readTestdata(t, tc.name+"-client.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !c.Reverse || c.SentPackets != tc.sent {
			t.Fatalf("%s: reverse %v, sent packets %v; want -R and the fixture's %v", tc.name, c.Reverse, c.SentPackets, tc.sent)
		}
		m, _, err := pairMetrics(s, c)
		if err != nil {
			t.Fatal(err)
		}
		if m[MetricLostPct] != tc.lostPct || m[MetricPackets] != tc.window || m[MetricLost] != tc.window*tc.lostPct/100 {
			t.Errorf("%s: lost %v%% (%v of %v), want %v%% of %v", tc.name, m[MetricLostPct], m[MetricLost], m[MetricPackets], tc.lostPct, tc.window)
		}
		if tc.recvd == 0 && m[results.MetricBitrate] != 0 {
			t.Errorf("%s: bitrate %v with nothing received", tc.name, m[results.MetricBitrate])
		}
		if _, ok := m[MetricJitter]; ok == (tc.recvd == 0) {
			t.Errorf("%s: jitter %v (present %v) with %v received", tc.name, m[MetricJitter], ok, tc.recvd)
		}
		out, err := probeOutcome(trialMetrics([]map[string]float64{m}), MetricSenderBitrate, 1)
		if err != nil {
			t.Fatal(err)
		}
		if out.LossPct != tc.lostPct {
			t.Errorf("%s: a ceiling probe reads %v%% loss, want %v%%", tc.name, out.LossPct, tc.lostPct)
		}
	}
}

// A trial of two reverse UDP pairs, one that got nothing and one that
// lost nothing, loses the first pair's share of the window's datagrams:
// counted with the client's end.sum_sent.packets, warm-up included (153
// for 114 measured), the lost pair weighed a third more than it sent.
// A sender's report without measured intervals leaves that count.
func TestTrialLossReverseUDPOverTheWindow(t *testing.T) {
	pair := func(name string) (*Server, *Client) {
		s, err := ParseServer(readTestdata(t, name+"-server.json"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseClient(readTestdata(t, name+"-client.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s, c
	}
	none, err := metricsOnly(pair("udp-reverse-none"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := metricsOnly(pair("udp-reverse"))
	if err != nil {
		t.Fatal(err)
	}
	got := trialMetrics([]map[string]float64{none, full})
	if want := 100 * 114.0 / (114 + 1144); math.Abs(got[MetricLostPct]-want) > 1e-9 {
		t.Errorf("trial lost %v%% (%v of %v), want %v%% (114 of 1258)", got[MetricLostPct], got[MetricLost], got[MetricPackets], want)
	}
	s, c := pair("udp-reverse-none")
	s.Intervals = nil // the sender's report has no measured window
	m, err := metricsOnly(s, c)
	if err != nil {
		t.Fatal(err)
	}
	if m[MetricLost] != 153 || m[MetricPackets] != 153 {
		t.Errorf("without the sender's intervals: lost %v of %v, want the client's 153 of 153", m[MetricLost], m[MetricPackets])
	}
}

// metricsOnly is pairMetrics without its series.
func metricsOnly(s *Server, c *Client) (map[string]float64, error) {
	m, _, err := pairMetrics(s, c)
	return m, err
}

func TestPairMetricsTCPCwndRTT(t *testing.T) {
	for _, tc := range []struct{ srv, cli string }{
		{"tcp-server.json", "tcp-client.json"},
		{"tcp-reverse-server.json", "tcp-reverse-client.json"},
		{"tcp-p2-server.json", "tcp-p2-client.json"},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			s, err := ParseServer(readTestdata(t, tc.srv))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseClient(readTestdata(t, tc.cli))
			if err != nil {
				t.Fatal(err)
			}
			m, series, err := pairMetrics(s, c)
			if err != nil {
				t.Fatal(err)
			}
			if !(m[MetricCwnd] > 1000) || !(m[MetricRTT] > 0) {
				t.Errorf("cwnd %v rtt %v", m[MetricCwnd], m[MetricRTT])
			}
			if len(series[MetricCwnd]) == 0 || len(series[MetricCwnd]) != len(series[MetricRTT]) {
				t.Errorf("series %v", series)
			}
			if _, ok := m[MetricJitter]; ok {
				t.Error("TCP has no jitter")
			}
			if !(m[results.MetricBitrate] > 1e9) {
				t.Errorf("bitrate %v", m[results.MetricBitrate])
			}
			// With -R the receiver is the client: its bitrate must be
			// computed from the client's intervals, near what the
			// server sent.
			if c.Reverse {
				if r := m[results.MetricBitrate] / c.SenderBitrate; r < 0.9 || r > 1.1 {
					t.Errorf("reverse: receiver %v vs sender %v", m[results.MetricBitrate], c.SenderBitrate)
				}
			}
		})
	}
}

func TestTrialMetricsLossFromSums(t *testing.T) {
	per := []map[string]float64{
		{results.MetricBitrate: 100, MetricLost: 1, MetricPackets: 100, MetricLostPct: 1, MetricJitter: 0.2},
		{results.MetricBitrate: 300, MetricLost: 9, MetricPackets: 100, MetricLostPct: 9, MetricJitter: 0.4},
	}
	m := trialMetrics(per)
	if m[results.MetricBitrate] != 200 || m[results.MetricBitrateSum] != 400 {
		t.Errorf("bitrates %v", m)
	}
	if m[MetricLost] != 10 || m[MetricPackets] != 200 || m[MetricLostPct] != 5 || math.Abs(m[MetricJitter]-0.3) > 1e-12 {
		t.Errorf("udp %v", m)
	}
}

func TestArgvOptions(t *testing.T) {
	d := New()
	tr := trial()
	p0, _, _ := pair(0, nil, nil)
	tr.Pairs = []workload.Pair{p0}
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp", Length: "1400", Rate: "500M", Parallel: 4, Reverse: true,
		Pin: &study.Pin{Server: "0", Client: "1-2"}}
	p, err := d.plan(tr)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(d.clientArgv(p, "10.0.0.1", 5201), " ")
	want := "taskset -c 1-2 iperf3 -c 10.0.0.1 -p 5201 -J -t 2 -O 1 -l 1400 -u -b 500M -P 4 -R --connect-timeout 3000"
	if got != want {
		t.Errorf("client argv\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(d.serverArgv(p, 5201), " "); got != "taskset -c 0 iperf3 -s -1 -J -p 5201" {
		t.Errorf("server argv %s", got)
	}
	tr.Spec = study.Workload{Tool: "iperf3", Protocol: "udp"}
	if _, err := d.plan(tr); err == nil {
		t.Error("UDP without a rate planned")
	}
}

// TestRetransmitSeries: the sender's per-second retransmits (Fig 8's
// third panel) are the measured intervals' sums, warm-up left out; its
// throughput (the first panel) is the sender's own intervals.
func TestRetransmitSeries(t *testing.T) {
	s, err := ParseServer(readTestdata(t, "tcp-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseClient(readTestdata(t, "tcp-client.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, series, err := pairMetrics(s, c)
	if err != nil {
		t.Fatal(err)
	}
	// tcp-client.json: intervals retransmit 0 (omitted), 7, 6, 9; the
	// last starts at the 3-s test's end slack and is the drain or not
	// by the same rule as the bitrate series.
	got := series[SeriesRetransmits]
	if len(got) != len(series[SeriesBitrate]) || len(got) < 2 || got[0] != 7 || got[1] != 6 {
		t.Errorf("retransmits per second %v (bitrate series %d long), want 7, 6, ... as the measured intervals", got, len(series[SeriesBitrate]))
	}
	// Fig 8's first panel is the sender's throughput: the client's
	// measured intervals (2472017920 bytes in 1.000571 s first), not the
	// server's (2471755776 in 1.000102 s).
	snd := series[SeriesSenderBitrate]
	if len(snd) != len(got) || math.Abs(snd[0]-2472017920*8/1.0005710124969482) > 1 {
		t.Errorf("sender bitrate per second %v, want the client's intervals, as long as the retransmits %v", snd, got)
	}
	if rcv := series[SeriesBitrate]; len(rcv) == 0 || math.Abs(rcv[0]-2471755776*8/1.0001020431518555) > 1 {
		t.Errorf("receiver bitrate per second %v, want the server's intervals", rcv)
	}
	u, err := ParseClient(readTestdata(t, "udp-client.json"))
	if err != nil {
		t.Fatal(err)
	}
	us, err := ParseServer(readTestdata(t, "udp-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, series, _ := pairMetrics(us, u); series[SeriesRetransmits] != nil {
		t.Errorf("UDP has no retransmits: %v", series[SeriesRetransmits])
	}
}
