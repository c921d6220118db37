package qperf

import (
	"strconv"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

const (
	// MinMessage: qperf sends a bare payload, so 1 B works, as netperf's
	// TCP_RR; with 0 it prints a meaningless latency.
	MinMessage = 1
	// MaxMessage keeps a udp_lat message within one UDP datagram (65507 B).
	MaxMessage = 65000
	// DefaultMessage is seed 004's TCP_RR request/response size.
	DefaultMessage = 1
)

// Describe says what qperf takes and reports (see package spec).
func (d *Driver) Describe() spec.Tool {
	return spec.Tool{
		Name:      "qperf",
		Protocols: []string{"tcp", "udp"},
		Options: append([]spec.Option{
			{Name: study.OptMessageSize, Sweep: study.OptMsgSizes, Doc: "the request and response size in bytes (-m)",
				Default: strconv.Itoa(DefaultMessage), Min: MinMessage, Max: MaxMessage,
				Note: "qperf sends the bare payload, so 1 B (netperf TCP_RR's size) is its smallest; its largest here is 65000 B, within one UDP datagram"},
		}, workload.CommonOptions()...),
		Programs: []spec.Program{
			{Name: "qperf", Package: "qperf", Version: []string{"qperf", "--version"}},
			// timeout stops a server together with its per-test child.
			{Name: "timeout", Package: "coreutils", Version: []string{"timeout", "--version"}},
		},
		Headline: []spec.Metric{{Name: MetricTPS}, {Name: MetricMean}},
		// tcp_lat and udp_lat: each request is answered by one of its
		// size.
		Data: spec.Data{Flow: spec.BothWays},
		// tcp_lat's test socket is a second TCP listener, reached at the
		// address the client was given: the kube engine's Services
		// forward it, knob service-path's do not.
		Kube:       spec.Kube{Support: spec.KubeAll},
		SecondPort: true,
		RoundTrips: true,
		// udp_lat has no timeout: a lost datagram stalls it silently.
		RefuseImpairment: refuseImpairment,
	}
}
