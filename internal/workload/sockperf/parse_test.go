package sockperf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func read(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestParseClient(t *testing.T) {
	for _, tc := range []struct {
		file           string
		runtime, recv  float64
		mean, p50, p99 float64
	}{
		{"tcp-64-client.txt", 1.552, 40331, 38.438, 14.110, 54.310},
	} {
		r, err := ParseClient(read(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if r.RunTime != tc.runtime || r.Received != tc.recv || r.MeanUs != tc.mean {
			t.Errorf("%s: %+v", tc.file, r)
		}
		if p, _ := r.Percentile(50); p != tc.p50 {
			t.Errorf("p50 %v", p)
		}
		if p, _ := r.Percentile(99); p != tc.p99 {
			t.Errorf("p99 %v", p)
		}
		if _, ok := r.Percentile(99.9); !ok {
			t.Error("no p99.9")
		}
		if r.MinUs != 13.209 || r.MaxUs != 9282.939 || r.Version != "3.7-no.git" {
			t.Errorf("min %v max %v version %q", r.MinUs, r.MaxUs, r.Version)
		}
		// Documented tolerance: in ping-pong one message is in flight, so
		// transactions/s is 1/mean RTT within 2% (the window edges).
		if x := r.TransactionsPerSec() * r.MeanUs / 1e6; math.Abs(x-1) > 0.02 {
			t.Errorf("tps x mean RTT = %v, want ~1", x)
		}
	}
}

// sockperf 3.8 and later print more statistics on the avg-rtt line; the
// captured 3.7 output with its line in that shape parses to the same.
func TestParseNewerAvgLine(t *testing.T) {
	old := read(t, "tcp-64-client.txt")
	newer := regexp.MustCompile(`avg-rtt=([0-9.]+) \(std-dev=([0-9.]+)\)`).ReplaceAll(old,
		[]byte("avg-rtt=$1 (std-dev=$2, mean-ad=0.358, median-ad=0.295, siqr=0.214, cv=0.048, std-error=0.002, 99.0% ci=[1.0, 2.0])"))
	if bytes.Equal(old, newer) {
		t.Fatal("the fixture has no avg-rtt line to rewrite")
	}
	a, err := ParseClient(old)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseClient(newer)
	if err != nil {
		t.Fatalf("sockperf 3.8+ avg-rtt line: %v", err)
	}
	if a.MeanUs != b.MeanUs || a.MeanUs == 0 {
		t.Errorf("mean %v from the newer line, %v from the old", b.MeanUs, a.MeanUs)
	}
}

func TestParseAllCaptured(t *testing.T) {
	for _, f := range []string{"tcp-14-client.txt", "udp-64-client.txt"} {
		r, err := ParseClient(read(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cdf := r.CDF()
		for i := 1; i < len(cdf); i++ {
			if cdf[i][0] < cdf[i-1][0] || cdf[i][1] < cdf[i-1][1] {
				t.Errorf("%s: CDF not monotone at %d: %v", f, i, cdf)
			}
		}
		if x := r.TransactionsPerSec() * r.MeanUs / 1e6; math.Abs(x-1) > 0.02 {
			t.Errorf("%s: tps x mean RTT = %v", f, x)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		kind error
		msg  string
	}{
		{"err-refused.txt", ErrConnect, "Connection refused"},
		{"err-udp-no-server.txt", ErrNoReplies, "No messages were received"},
		{"err-no-observations.txt", ErrNoReplies, "No valid observations"},
		{"err-msg-size.txt", nil, "Invalid message size"},
	} {
		_, err := ParseClient(read(t, tc.file))
		var te *ToolError
		if !errors.As(err, &te) {
			t.Errorf("%s: want *ToolError, got %v", tc.file, err)
			continue
		}
		if tc.kind != nil && !errors.Is(err, tc.kind) {
			t.Errorf("%s: %v is not %v", tc.file, err, tc.kind)
		}
		if !strings.Contains(te.Msg, tc.msg) {
			t.Errorf("%s: message %q", tc.file, te.Msg)
		}
	}
	if err := ParseServerError(read(t, "err-server-bind.txt")); err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("server bind: %v", err)
	}
	if err := ParseServerError(read(t, "tcp-server.txt")); err != nil {
		t.Errorf("healthy server: %v", err)
	}
	if _, err := ParseClient(nil); err == nil {
		t.Error("empty output parsed")
	}
}

func FuzzParseClient(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseClient(data)
		if err == nil && (!(r.RunTime > 0) || !(r.Received > 0)) {
			t.Errorf("accepted an empty window: %+v", r)
		}
		_ = ParseServerError(data)
	})
}
