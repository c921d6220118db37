package stats

import "strings"

// lowerIsBetter are the parts of a metric's name that make it better
// low (direction_test.go classifies every metric name the workloads
// and collectors emit, so a new one is classified on purpose). A name
// with none of them is better high: bitrates, rates, transactions,
// requests, a core's idle share.
var lowerIsBetter = []string{
	// Time: latencies, jitter, pod set-up, start-up and teardown and the
	// phases of start-up.
	"lat", "rtt", "jitter", "setup", "startup", "pod_start", "teardown", "phase_",
	// Loss and its kin: lost and dropped packets, retransmits, errors,
	// timeouts, reordering, a qdisc over its limit or requeueing, packets
	// the first device refused (pktgen's errors).
	"lost", "refused", "loss", "drop", "retrans", "error", "timeout", "out_of_order", "overlimit", "requeue",
	// Cost: CPU per packet (cpp_*_ns, cpp_*_cycles), the CPU and memory
	// the nodes and the CNI's daemons use, a core's time in softirqs,
	// the kernel, user space and NET_RX, and the netfilter rules and
	// chains installed or on a packet's path.
	"cpp_", "cycles", "cpu_pct", "cpu_percent", "memory", "rss", "softirq", "core_system", "core_user", "core_net_rx",
	"rules_count", "chains_count",
}

// DirectionOf is the direction in which a metric improves, from its
// name (lowerIsBetter): latencies, jitter, loss, drops, retransmits,
// errors, CPU and memory cost and pod set-up, start-up and teardown
// times are better low; bitrates, rates and transactions better high.
func DirectionOf(metric string) Direction {
	for _, s := range lowerIsBetter {
		if strings.Contains(metric, s) {
			return LowerIsBetter
		}
	}
	return HigherIsBetter
}
