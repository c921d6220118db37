package stats

import "strings"

// DirectionOf is the direction in which a metric improves, from its
// name: latencies, jitter, loss, retransmits, errors, CPU cost and pod
// set-up, start-up and teardown times are better low; bitrates, rates and transactions better high.
func DirectionOf(metric string) Direction {
	for _, s := range []string{"lat", "rtt", "jitter", "lost", "loss", "retrans", "error", "timeout", "cpp_", "setup", "startup", "teardown", "phase_"} {
		if strings.Contains(metric, s) {
			return LowerIsBetter
		}
	}
	return HigherIsBetter
}
