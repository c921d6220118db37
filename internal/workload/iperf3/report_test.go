package iperf3

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestParseServer(t *testing.T) {
	// Expected values computed independently (python) from the files:
	// bytes and seconds of the non-omitted intervals minus the trailing
	// partial one.
	tests := []struct {
		file      string
		proto     string
		intervals int // all, omitted included
		bytes     float64
		seconds   float64
		sender    bool
		udp       bool
	}{
		{"tcp-server.json", "TCP", 5, 7311589270, 3.0000150203704834, false, false},
		{"tcp-p2-server.json", "TCP", 5, 7821328384, 3.0009220838546753, false, false},
		{"tcp-reverse-server.json", "TCP", 5, 9260236800, 3.0000659227371216, true, false},
		{"udp-server.json", "UDP", 4, 37486592, 3.0000290870666504, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := ParseServer(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Version != "iperf 3.12" || s.Protocol != tt.proto || s.Omit != 1 || s.Duration != 3 {
				t.Errorf("report header = %q %q omit %d duration %d", s.Version, s.Protocol, s.Omit, s.Duration)
			}
			if len(s.Intervals) != tt.intervals || !s.Intervals[0].Omitted || s.Intervals[1].Omitted {
				t.Errorf("intervals = %+v", s.Intervals)
			}
			if s.MeasuredBytes != tt.bytes || !near(s.MeasuredSeconds, tt.seconds) {
				t.Errorf("measured %v bytes in %v s, want %v in %v", s.MeasuredBytes, s.MeasuredSeconds, tt.bytes, tt.seconds)
			}
			if want := tt.bytes * 8 / tt.seconds; !near(s.Bitrate, want) {
				t.Errorf("bitrate %v, want %v", s.Bitrate, want)
			}
			if s.Reverse != tt.sender || s.Intervals[1].Sender != tt.sender {
				t.Errorf("reverse %v, sender %v; want %v", s.Reverse, s.Intervals[1].Sender, tt.sender)
			}
			if (s.UDP != nil) != tt.udp || (s.Intervals[1].UDP != nil) != tt.udp {
				t.Errorf("UDP stats %+v, interval UDP %+v, want present=%v", s.UDP, s.Intervals[1].UDP, tt.udp)
			}
		})
	}
}

func TestParseServerUDP(t *testing.T) {
	s, err := ParseServer(readTestdata(t, "udp-server.json"))
	if err != nil {
		t.Fatal(err)
	}
	// end.sum of the server: 1144 packets received, none lost.
	if s.UDP.Packets != 1144 || s.UDP.LostPackets != 0 || !(s.UDP.JitterMs > 0) {
		t.Errorf("UDP stats = %+v", *s.UDP)
	}
}

func TestParseClient(t *testing.T) {
	tests := []struct {
		file        string
		sender      float64
		retransmits float64
		udpLost     float64 // -1: no UDP stats
	}{
		{"tcp-client.json", 19482886277.65757, 22, -1},
		{"tcp-p2-client.json", 20857028228.024883, 106, -1},
		{"tcp-reverse-client.json", 24693568152.358826, 1, -1},
		{"udp-client.json", 99963045.776784, 0, 0.0874125874125874},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := ParseClient(readTestdata(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if c.SenderBitrate != tt.sender || c.Retransmits != tt.retransmits {
				t.Errorf("sender %v retransmits %v, want %v %v", c.SenderBitrate, c.Retransmits, tt.sender, tt.retransmits)
			}
			if !(c.ReceiverBitrate > 0) {
				t.Errorf("receiver bitrate %v", c.ReceiverBitrate)
			}
			switch {
			case tt.udpLost < 0 && c.UDP != nil:
				t.Errorf("unexpected UDP stats %+v", *c.UDP)
			case tt.udpLost >= 0 && (c.UDP == nil || c.UDP.LostPercent != tt.udpLost):
				t.Errorf("UDP stats %+v, want lost %v%%", c.UDP, tt.udpLost)
			}
		})
	}
}

// The server measures a little less than the client sent: the same data,
// counted at the other end. A parser bug (omitted intervals counted,
// bytes vs bits) would break this.
func TestServerAgreesWithClient(t *testing.T) {
	for _, p := range [][2]string{{"tcp-server.json", "tcp-client.json"}, {"tcp-p2-server.json", "tcp-p2-client.json"}} {
		s, err := ParseServer(readTestdata(t, p[0]))
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseClient(readTestdata(t, p[1]))
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Bitrate / c.SenderBitrate; r < 0.95 || r > 1.05 {
			t.Errorf("%s: server %v vs client %v bit/s (ratio %.3f)", p[0], s.Bitrate, c.SenderBitrate, r)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		file   string
		server bool
		kind   error // nil: a ToolError of no particular kind
		msg    string
	}{
		{"err-client-refused.json", false, ErrConnect, "unable to connect to server: Connection refused"},
		{"err-client-busy.json", false, ErrServerBusy, "the server is busy running a test. try again later"},
		{"err-client-unreachable.json", false, ErrConnect, "unable to connect to server: Network is unreachable"},
		{"err-client-connect-timeout.json", false, ErrConnect, "unable to connect to server: Connection timed out"},
		{"err-client-interrupt.json", false, ErrInterrupted, "interrupt - the client has terminated"},
		{"err-client-server-gone.json", false, ErrPeerTerminated, "the server has terminated"},
		{"err-server-interrupt.json", true, ErrInterrupted, "interrupt - the server has terminated"},
		{"err-server-idle-interrupt.json", true, ErrInterrupted, "interrupt - the server has terminated"},
		{"err-server-client-gone.json", true, ErrPeerTerminated, "the client has terminated"},
		{"err-server-bind.json", true, ErrListen, "error - unable to start listener for connections: Address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var err error
			if tt.server {
				_, err = ParseServer(readTestdata(t, tt.file))
			} else {
				_, err = ParseClient(readTestdata(t, tt.file))
			}
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *ToolError", err)
			}
			if te.Msg != tt.msg || !errors.Is(err, tt.kind) {
				t.Errorf("got %q (kind %v), want %q (kind %v)", te.Msg, te.Unwrap(), tt.msg, tt.kind)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"text":         "iperf3: error - unable to connect\n",
		"truncated":    `{"start": {"version": "iperf 3.12"}, "intervals": [`,
		"no intervals": `{"start": {}, "intervals": [], "end": {}}`,
		"all omitted":  `{"intervals": [{"sum": {"seconds": 1, "bytes": 5, "omitted": true}}], "end": {}}`,
		"zero seconds": `{"intervals": [{"sum": {"seconds": 0, "bytes": 5}}], "end": {}}`,
		"huge":         `{"intervals": [{"sum": {"seconds": 1, "bytes": 1e308}}], "end": {}}`,
	} {
		if s, err := ParseServer([]byte(in)); err == nil {
			t.Errorf("ParseServer(%s) = %+v, want an error", name, s)
		}
	}
	if _, err := ParseClient([]byte(`{"end": {}}`)); err == nil {
		t.Error("ParseClient without end.sum_sent: want an error")
	}
}

// A stray warning line before the JSON must not lose the report.
func TestParseSkipsLeadingText(t *testing.T) {
	in := append([]byte("warning: something\n"), readTestdata(t, "tcp-server.json")...)
	if _, err := ParseServer(in); err != nil {
		t.Fatal(err)
	}
}

func TestTrailingPartialInterval(t *testing.T) {
	tests := []struct {
		name     string
		ivs      []Interval
		duration float64
		bytes    float64
		seconds  float64
	}{
		{"drain after the end", []Interval{
			{Start: 0, Seconds: 1, Bytes: 100, Omitted: true},
			{Start: 0, Seconds: 1, Bytes: 10},
			{Start: 1, Seconds: 1, Bytes: 20},
			{Start: 2.0003, Seconds: 0.004, Bytes: 1000},
		}, 2, 30, 2},
		// A starved server: its last interval is short but holds data
		// sent within the test; it stays.
		{"short interval before the end", []Interval{
			{Start: 0, Seconds: 1, Bytes: 10},
			{Start: 1, Seconds: 0.4, Bytes: 20},
		}, 2, 30, 1.4},
		{"no duration: by length", []Interval{
			{Start: 0, Seconds: 1, Bytes: 10},
			{Start: 1, Seconds: 1, Bytes: 20},
			{Start: 2, Seconds: 0.004, Bytes: 1000},
		}, 0, 30, 2},
		// A single measured interval is all there is: keep it.
		{"single", []Interval{{Start: 0, Seconds: 0.5, Bytes: 7}}, 2, 7, 0.5},
	}
	for _, tt := range tests {
		b, s, err := measure(tt.ivs, tt.duration)
		if err != nil || b != tt.bytes || !near(s, tt.seconds) {
			t.Errorf("%s: measure = %v, %v, %v; want %v, %v", tt.name, b, s, err, tt.bytes, tt.seconds)
		}
	}
}
