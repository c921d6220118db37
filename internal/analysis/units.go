package analysis

import (
	"math"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

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

// UpperBound is the most a metric's true mean can be: 100 for a share of
// a whole in percent (a CPU's time, a node's CPUs or memory, datagrams
// lost), where an interval reaching beyond 100 says nothing; +Inf for the
// rest (daemons_cpu_pct adds up cores, so it is not such a share).
func UpperBound(metric string) float64 {
	metric, _ = CoreBase(metric)
	switch {
	case metric == results.MetricCoreIdle, metric == results.MetricCoreSoftIRQ,
		metric == results.MetricCoreSystem, metric == results.MetricCoreUser, metric == results.MetricCorePoll,
		strings.HasPrefix(metric, "node_cpu_percent_"), strings.HasPrefix(metric, "node_memory_percent_"),
		metric == "lost_percent", metric == "ceiling_loss_pct":
		return 100
	}
	return math.Inf(1)
}

// Describe is a metric's summary over trials, its interval kept within
// where the mean can lie (stats.DescribeWithin).
func Describe(metric string, xs []float64) stats.Summary {
	return stats.DescribeWithin(xs, UpperBound(metric))
}
