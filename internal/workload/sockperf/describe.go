package sockperf

import (
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

const (
	// MaxMessage bounds --msg-size (sockperf's own limit is 65000).
	MaxMessage = 65000
	// DefaultMessage is seed 001's request/response size.
	DefaultMessage = 64
	// MinDuration is the shortest run the driver takes: sockperf leaves
	// out its first 400 ms and a tail, so a 1 s run measures about half
	// a second ("[Valid Duration] RunTime=0.550 sec").
	MinDuration = 2 * time.Second
)

// Describe says what sockperf takes and reports (see package spec).
func (d *Driver) Describe() spec.Tool {
	return spec.Tool{
		Name:      "sockperf",
		Protocols: []string{"tcp", "udp"},
		Options: append([]spec.Option{
			{Name: study.OptMessageSize, Sweep: study.OptMsgSizes, Doc: "the request and response size in bytes (--msg-size)",
				Default: strconv.Itoa(DefaultMessage), Min: MinMessage, Max: MaxMessage,
				Note: "sockperf's smallest message is 14 B, its sequence number and timestamp: use 14 for netperf's 1 B TCP_RR; its largest is 65000 B"},
		}, workload.CommonOptions()...),
		// Ping-pong: each message is answered by one of its size.
		Data:             spec.Data{Flow: spec.BothWays},
		Programs:         []spec.Program{{Name: "sockperf", Package: "sockperf", Version: []string{"sockperf", "--version"}}},
		Headline:         []spec.Metric{{Name: MetricTPS}, {Name: MetricMean}, {Name: MetricP99}},
		Kube:             spec.Kube{Support: spec.KubeAll},
		RoundTrips:       true,
		MinDuration:      MinDuration,
		MinDurationWhy:   "sockperf leaves out its first 400 ms and a tail: a 1 s run measures about half a second",
		RefuseImpairment: refuseImpairment,
	}
}
