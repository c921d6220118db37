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
	}
	if strings.HasPrefix(metric, "cpp_") && strings.HasSuffix(metric, "_ns") {
		return "ns/packet", true
	}
	if strings.HasPrefix(metric, "cpp_") && strings.HasSuffix(metric, "_cycles") {
		return "cycles/packet", true
	}
	return "", false
}
