package sockperf

import (
	"os"
	"strings"
	"testing"
)

// A UDP ping-pong client that lost one datagram prints the half-second
// before the loss as a valid result, no message counted dropped: it
// parses, and the driver fails the pair for its short window, which a
// normal end's window passes.
func TestStalledClientFails(t *testing.T) {
	for _, c := range []struct {
		file    string
		seconds int
		tcp     bool
		want    string
	}{
		{"udp-stall-client.txt", 4, false, "sockperf measured 0.527 s of a 4-s test (about 3.55 s at a normal end): a lost or corrupted datagram stalled its client"},
		{"udp-64-client.txt", 2, false, ""},
		{"tcp-64-client.txt", 2, true, ""},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseClient(b)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		err = plan{seconds: c.seconds, tcp: c.tcp}.checkWindow(r)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}

// UDP ping-pong through an impairment that loses, corrupts or
// duplicates datagrams is refused; delay is not, nor TCP through loss.
func TestRefuseImpairment(t *testing.T) {
	if got := refuseImpairment("udp", "loss-low", nil); !strings.Contains(got, "loses datagrams (loss 5%)") || !strings.Contains(got, "never resends") {
		t.Errorf("udp through loss-low: %q", got)
	}
	if got := refuseImpairment("udp", "delay-high", nil); got != "" {
		t.Errorf("udp through delay-high: %q", got)
	}
	if got := refuseImpairment("tcp", "loss-low", nil); got != "" {
		t.Errorf("tcp through loss-low: %q", got)
	}
}

// Long round trips (netem delay, TCP's retransmit stalls) shorten a
// normal end's window by up to a round trip at each edge: allowed, as
// far as the slowest round trip seen; a stalled UDP client's slowest is
// short and its window far shorter.
func TestWindowAllowsLongRoundTrips(t *testing.T) {
	p := plan{seconds: 2}
	if err := p.checkWindow(&Report{RunTime: 0.6, MaxUs: 520e3}); err != nil {
		t.Errorf("0.5 s round trips, window 0.6 of 1.55 s: %v", err)
	}
	if err := p.checkWindow(&Report{RunTime: 0.6, MaxUs: 2.5e3}); err == nil {
		t.Error("2.5 ms round trips, window 0.6 of 1.55 s: passed")
	}
}
