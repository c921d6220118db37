package app

import (
	"strings"
	"testing"
)

// TestKnownMetricsSuggests: a metric neither run has is refused with the
// names it most likely means, several where several are equally near.
// With rtt_us among other rtt_* metrics, "rtt" suggested nothing
// (suggest.Closest takes an abbreviation only when one name begins
// with it), while docs/statistics.md shows 'did you mean "rtt_us"?'.
func TestKnownMetricsSuggests(t *testing.T) {
	have := []string{"bitrate", "rtt_mean_us", "rtt_p50_us", "rtt_p90_us", "rtt_p99_us", "rtt_us", "rtt_ms"}
	for _, tc := range []struct{ metric, want string }{
		{"rtt", `--metric "rtt": neither run has this metric (did you mean one of "rtt_us", "rtt_ms"? they have: bitrate, rtt_mean_us`},
		{"rtt_p95_us", `(did you mean one of "rtt_p90_us", "rtt_p99_us"? they have:`},
		{"bitrat", `(did you mean "bitrate"? they have:`},
		{"zzz", `neither run has this metric (they have:`},
	} {
		err := knownMetrics([]string{tc.metric}, nil, have)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.metric, err, tc.want)
		}
	}
	// The documented example: the runs' rtt metrics of a tcp study.
	err := knownMetrics([]string{"rtt"}, nil, []string{"bitrate", "retransmits", "rtt_us", "snd_cwnd_bytes", "rtt_p99_us"})
	if err == nil || !strings.Contains(err.Error(), `--metric "rtt": neither run has this metric (did you mean "rtt_us"? they have: `) {
		t.Errorf("rtt: %v", err)
	}
}
