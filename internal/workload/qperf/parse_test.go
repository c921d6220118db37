package qperf

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseCaptured reads real qperf 0.4.11 output. qperf's latency is
// half the round trip and its msg_rate counts both directions, so the
// round trip is 2 x latency and transactions/s msg_rate / 2; msg_rate x
// latency is qperf's local over mean time (calc_results), 1 within 2%.
func TestParseCaptured(t *testing.T) {
	for _, tc := range []struct {
		file, test      string
		latencyNs, rate float64
		msg             float64
	}{
		{"tcp-1-client.txt", "tcp_lat", 26468.3, 37781, 1},
		{"tcp-64-client.txt", "tcp_lat", 7662.48, 130506, 64},
		{"udp-1-client.txt", "udp_lat", 6737.16, 148430, 1},
		{"tcp-1-units-client.txt", "tcp_lat", 14533.5, 68806.5, 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, err := ParseClient(read(t, tc.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Test != tc.test || math.Abs(r.LatencySec*1e9-tc.latencyNs) > 1e-6 || math.Abs(r.MsgRate-tc.rate) > 1e-6 || r.MsgSize != tc.msg || r.TimeSec != 2 {
				t.Errorf("got %+v", r)
			}
			if r.RTTUs() != 2*r.HalfRTTUs() || math.Abs(r.RTTUs()-2*tc.latencyNs/1e3) > 1e-6 {
				t.Errorf("RTT %v us, half %v us", r.RTTUs(), r.HalfRTTUs())
			}
			if x := r.TransactionsPerSec() * r.RTTUs() / 1e6; math.Abs(x-1) > 0.02 {
				t.Errorf("transactions/s %v x RTT %v us = %v, want 1 +- 2%%", r.TransactionsPerSec(), r.RTTUs(), x)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	_, err := ParseClient(read(t, "err-no-server.txt"), nil)
	if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "127.0.0.1: failed to connect") {
		t.Errorf("no server: %v", err)
	}
	_, err = ParseClient(read(t, "err-server-bind.txt"), read(t, "err-server-bind.stderr.txt"))
	if !errors.Is(err, ErrNoResult) || !strings.Contains(err.Error(), "unable to make TCP socket") {
		t.Errorf("server bind: %v", err)
	}
	for name, out := range map[string]string{
		"empty":        "",
		"no rate":      "tcp_lat:\n    latency = 5 us\n",
		"zero latency": "tcp_lat:\n    latency = 0 ns\n    msg_rate = 5 /sec\n",
		"bad unit":     "tcp_lat:\n    latency = 5 parsecs\n    msg_rate = 5 /sec\n",
		"bad number":   "tcp_lat:\n    latency = NaN ns\n    msg_rate = 5 /sec\n",
		"negative":     "tcp_lat:\n    latency = -5 ns\n    msg_rate = 5 /sec\n",
	} {
		if r, err := ParseClient([]byte(out), nil); err == nil {
			t.Errorf("%s: got %+v, want an error", name, r)
		}
	}
}

// The names shared with sockperf mean the same there: round trip in µs,
// round trips per second, message size.
func TestMetricNamesMatchSockperf(t *testing.T) {
	for ours, theirs := range map[string]string{
		MetricTPS: sockperf.MetricTPS, MetricTPSSum: sockperf.MetricTPSSum,
		MetricMean: sockperf.MetricMean, MetricMsgBytes: sockperf.MetricMsgBytes,
	} {
		if ours != theirs {
			t.Errorf("qperf %s, sockperf %s", ours, theirs)
		}
	}
}
