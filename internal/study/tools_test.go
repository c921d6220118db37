package study

import (
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/workload/spec"
)

// testTools stand in for the workload registry, which this package cannot
// import (the drivers import study). They mirror the drivers' options;
// the registry's own test resolves the built-in studies and these
// fixtures with the real descriptions.
var testTools = func() []spec.Tool {
	common := []spec.Option{
		{Name: OptPlacement, Doc: "where the client runs", Default: PlacementInterNode},
		{Name: OptPin, Doc: "CPU lists", Unset: "not pinned"},
		{Name: OptCPP, Doc: "CPU cost per packet", Unset: "not sampled"},
		{Name: OptCounters, Doc: "counters", Unset: "not recorded"},
		{Name: OptTarget, Doc: "pod, service or hairpin", Unset: "the engine's own"},
	}
	return []spec.Tool{
		{Name: "iperf3", Protocols: []string{"tcp", "udp"}, Options: append([]spec.Option{
			{Name: OptLength, Sweep: OptLengths, Doc: "the write size", Unset: "iperf3's",
				Min: 1, Max: 1 << 20, MinFor: map[string]int{"udp": 16}, MaxFor: map[string]int{"udp": 65507},
				Note: "iperf3's bounds on -l"},
			{Name: OptRate, Sweep: OptRates, Doc: "an offered bitrate", Unset: "unlimited",
				RequiredFor: []string{"udp"}, OrInstead: []string{OptLossCeiling}, Note: "iperf3's UDP default of 1 Mbit/s measures nothing"},
			{Name: OptMSS, Sweep: OptMSSes, Doc: "the TCP MSS", Unset: "the MTU's", Min: MinMSS, Max: 65535 - MSSHeaders,
				OnlyFor: []string{"tcp"}, Note: "Linux refuses a TCP MSS below 88 B"},
			{Name: OptLossCeiling, Doc: "a loss ceiling", Unset: "the rate", OnlyFor: []string{"udp"}, Note: "TCP does not lose"},
			{Name: OptCeilingSrch, Doc: "the search", Unset: "defaults", OnlyFor: []string{"udp"}, Note: "it tunes lossCeiling"},
			{Name: OptSender, Doc: "the UDP sender", Unset: "iperf3", OnlyFor: []string{"udp"}, Note: "TCP's sender is its connection"},
			{Name: OptParallel, Sweep: OptParallels, Doc: "streams", Unset: "one", Min: 1, Max: 128, Note: "iperf3's limit on -P"},
			{Name: OptReverse, Doc: "reverse", Unset: "client sends"},
			{Name: OptBackground, Doc: "background load", Unset: "none"},
		}, common...),
			Headline:  []spec.Metric{{Name: "bitrate"}, {Name: "lost_percent", Protocols: []string{"udp"}}, {Name: "rtt_us", Protocols: []string{"tcp"}}},
			MaxWarmup: 60 * time.Second, WarmupOption: "iperf3's --omit"},
		{Name: "sockperf", Protocols: []string{"tcp", "udp"}, Options: append([]spec.Option{
			{Name: OptMessageSize, Sweep: OptMsgSizes, Doc: "message size", Default: "64", Min: 14, Max: 65000,
				Note: "sockperf's smallest message is 14 B"},
		}, common...),
			Headline:    []spec.Metric{{Name: "transactions_per_s"}, {Name: "rtt_mean_us"}},
			MinDuration: 2 * time.Second, MinDurationWhy: "sockperf leaves out its first 400 ms and a tail: a 1 s run measures about half a second"},
		{Name: "qperf", Protocols: []string{"tcp", "udp"}, Options: append([]spec.Option{
			{Name: OptMessageSize, Sweep: OptMsgSizes, Doc: "message size", Default: "1", Min: 1, Max: 65000,
				Note: "qperf sends the bare payload"},
		}, common...),
			Headline: []spec.Metric{{Name: "transactions_per_s"}, {Name: "rtt_mean_us"}},
			// A stand-in for package impair: presets and definitions
			// that lose datagrams by name or field.
			RefuseImpairment: func(protocol, name string, fields map[string]string) string {
				if protocol == "udp" && (strings.HasPrefix(name, "loss") || fields["loss"] != "") {
					return "it loses datagrams"
				}
				return ""
			}},
		{Name: "ab", Protocols: []string{"tcp"}, Options: append([]spec.Option{
			{Name: OptConcurrency, Doc: "concurrency", Default: "1", Min: 1, Max: 20000, Note: "ab's own limit"},
			{Name: OptSize, Doc: "body size", Default: "5M", Min: 1, Max: 64 << 20,
				Note: "each server writes a file of this size per trial"},
		}, common...),
			Headline: []spec.Metric{{Name: "requests_per_s"}, {Name: "latency_mean_ms"}}},
		{Name: "podstartup", Protocols: []string{"tcp"}, Task: true, Options: []spec.Option{
			{Name: OptConcurrency, Doc: "pods at once", Default: "1", Min: 1, Max: 200, Note: "a node holds 250 pods"},
			{Name: OptPods, Doc: "pods a trial starts", Unset: "concurrency", Min: 1, Max: 200, Note: "a node holds 250 pods"},
		}, Headline: []spec.Metric{{Name: "startup_ms"}}},
	}
}()
