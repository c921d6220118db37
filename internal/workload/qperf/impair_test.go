package qperf

import (
	"strconv"
	"strings"
	"testing"
)

// Why a UDP latency test through an impairment that drops datagrams is
// refused before it runs, not caught after (real qperf 0.4.11 output,
// testdata/README.md): a lost reply stalls the client until -t ends and
// qperf prints the result as valid, 10 ms where the path takes 22 µs;
// and qperf's own counts (-vvs) at that stall are those of a healthy
// run whose timer ended the last read (sent one more than received).
func TestStallLooksValid(t *testing.T) {
	ok, err := ParseClient(read(t, "udp-1-relay-client.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stalled, err := ParseClient(read(t, "udp-1-stall-client.txt"), nil)
	if err != nil {
		t.Fatalf("a stalled run is an error here (%v): then the refusal at validation could go", err)
	}
	if stalled.RTTUs() < 100*ok.RTTUs() {
		t.Errorf("stalled RTT %v µs, healthy %v µs: the fixture shows no stall", stalled.RTTUs(), ok.RTTUs())
	}
	counts := func(name string) (sent, got int) {
		for _, l := range strings.Split(string(read(t, name)), "\n") {
			k, v, _ := strings.Cut(l, "=")
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			switch strings.TrimSpace(k) {
			case "loc_send_msgs":
				sent = n
			case "loc_recv_msgs":
				got = n
			}
		}
		return sent, got
	}
	for _, f := range []string{"udp-1-stall-vvs-client.txt", "udp-1-vvs-client.txt"} {
		if sent, got := counts(f); sent != got+1 || got == 0 {
			t.Errorf("%s: sent %d, received %d; want one more sent", f, sent, got)
		}
	}
}

// udp_lat is refused through what loses, corrupts or duplicates a
// datagram, presets and definitions alike; delay, rate and reordering
// (one datagram in flight has nothing to overtake) pass, as does tcp_lat
// through anything.
func TestRefuseImpairment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"loss-low", nil, "loses datagrams (loss 5%)"},
		{"delay-loss-high", nil, "loses datagrams (loss 5%)"},
		{"corruption-medium", nil, "corrupts them (corrupt 20%: a datagram that fails its checksum is dropped)"},
		{"bursty", map[string]string{"gemodel": "1% 10%"}, "loses datagrams (gemodel)"},
		{"dup", map[string]string{"duplicate": "1%"}, "duplicates them (duplicate 1%)"},
		{"both", map[string]string{"loss": "1%", "duplicate": "2%"}, "loses datagrams (loss 1%) and duplicates them (duplicate 2%)"},
		{"delay-high", nil, ""},
		{"wan", map[string]string{"delay": "20ms", "jitter": "2ms", "reorder": "25%", "rate": "100mbit"}, ""},
		{"none", nil, ""},
		{"no-such-preset", nil, ""},
	} {
		got := refuseImpairment("udp", tc.name, tc.fields)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q, want %q", tc.name, tc.fields, got, tc.want)
		}
		if got != "" && !strings.Contains(got, "without a timeout") {
			t.Errorf("%s: %q does not say why", tc.name, got)
		}
		if tcp := refuseImpairment("tcp", tc.name, tc.fields); tcp != "" {
			t.Errorf("tcp through %s: %q", tc.name, tcp)
		}
	}
}
