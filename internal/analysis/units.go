package analysis

import "strings"

// extraUnit gives the units of workload metrics whose names do not follow
// the suffix conventions of Unit.
func extraUnit(metric string) (string, bool) {
	switch metric {
	case "sender_bitrate":
		return "bit/s", true
	case "concurrency":
		return "clients", true
	// The netem qdisc's counters (collect's qdisc collector).
	case "qdisc_sent_packets", "qdisc_dropped", "qdisc_requeues", "qdisc_overlimits":
		return "packets", true
	}
	// Per-node CPU and memory (collect's nodes collector).
	if strings.HasPrefix(metric, "node_cpu_percent_") || strings.HasPrefix(metric, "node_memory_percent_") {
		return "%", true
	}
	// CPU cost per packet: ns of CPU time (perf cpu-clock) or hardware
	// cycles, by the event the run could sample (internal/metrics/cpp).
	if strings.HasPrefix(metric, "cpp_") && strings.HasSuffix(metric, "_ns") {
		return "ns/packet", true
	}
	if strings.HasPrefix(metric, "cpp_") && strings.HasSuffix(metric, "_cycles") {
		return "cycles/packet", true
	}
	return "", false
}
