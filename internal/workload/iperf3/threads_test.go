package iperf3

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/study"
)

// iperf3 before 3.16 runs a pair's -P streams in one thread per end, so
// nic-modes' flows sweep (1..16 streams of one pair) levelled off at one
// core's rate with nothing said; the run now says so where it applies.
func TestThreadsNote(t *testing.T) {
	flows := []study.Workload{{Name: "tcp", Tool: "iperf3"}, {Name: "flows@P16", Tool: "iperf3", Parallel: 16}, {Name: "rr", Tool: "sockperf", Parallel: 32}}
	for _, c := range []struct {
		version string
		ws      []study.Workload
		want    string
	}{
		{"iperf 3.12 (cJSON 1.7.15)", flows, "iperf3 3.12 runs a pair's parallel streams in one thread at each end (threads per stream came in 3.16): flows@P16's 16 streams"},
		{"iperf 3.9 (cJSON 1.7.13)", flows, "iperf3 3.9 runs"},
		{"iperf 3.16 (cJSON 1.7.15)", flows, ""},
		{"iperf 3.18", flows, ""},
		{"iperf 4.0", flows, ""},
		{"iperf 3.12", flows[:1], ""},
		{"", flows, ""},
		{"something else 3.1", flows, ""},
	} {
		got := ThreadsNote(c.version, c.ws)
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want %q", c.version, got, c.want)
		}
	}
	// A cluster's is the image's, whose version is not read here.
	if got := ImageThreadsNote(flows); !strings.Contains(got, "flows@P16's 16 streams") {
		t.Errorf("cluster: %q", got)
	}
	if got := ImageThreadsNote(flows[:1]); got != "" {
		t.Errorf("cluster, one stream: %q", got)
	}
}
