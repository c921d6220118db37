package ab

import (
	"strconv"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

const (
	// MaxConcurrency bounds ab -c (ab's own limit is 20000).
	MaxConcurrency = 20000
	// DefaultSize is seed 004's response body.
	DefaultSize = "5M"
	// MaxSize bounds the response body: every server pod writes one file
	// of this size to the run's temporary directory each trial.
	MaxSize = 64 << 20
	// MaxRequests bounds ab -n (seed 004 ran 500K per test).
	MaxRequests = 10_000_000
)

var (
	programAB    = spec.Program{Name: "ab", Package: "apache2-utils", Version: []string{"ab", "-V"}}
	programNginx = spec.Program{Name: "nginx", Package: "nginx-light", Version: []string{"nginx", "-v"}}
)

// Describe says what the HTTP workload takes and reports (see package
// spec).
func (d *Driver) Describe() spec.Tool {
	return spec.Tool{
		Name:      "ab",
		Protocols: []string{"tcp"},
		Options: append([]spec.Option{
			{Name: study.OptConcurrency, Doc: "requests in flight per client (ab -c); a list sweeps",
				Default: strconv.Itoa(1), Min: 1, Max: MaxConcurrency, Note: "ab's own limit"},
			{Name: study.OptSize, Doc: "the response body size", Default: DefaultSize, Min: 1, Max: MaxSize,
				Note: "each server writes a file of this size per trial"},
			{Name: study.OptRequests, Doc: "requests per client in the measured run (ab -n): it ends at this count or at the trial's end, whichever comes first",
				Unset: "time-bounded: the measured part of the trial", Min: 1, Max: MaxRequests,
				Note: "ab allocates a record per request up front (about 40 B each)"},
		}, workload.CommonOptions()...),
		// The measured bytes are the responses' bodies; the requests
		// (a GET each) go the other way with the ACKs.
		Data:     spec.Data{Flow: spec.ServerToClient, Sender: "the server sends its responses", Back: "its requests and ACKs"},
		Programs: []spec.Program{programAB, programNginx},
		Headline: []spec.Metric{{Name: MetricRPS}, {Name: MetricTransfer}, {Name: MetricMean}, {Name: MetricP99},
			{Name: MetricErrors}, {Name: MetricTimeouts}},
		Kube:       spec.Kube{Support: spec.KubeAll},
		RoundTrips: true,
		// nginx's worker is the busiest: a socket and the body's file per
		// request being sent (workerFiles), where ab holds one socket.
		FilesPerRequest: filesPerRequest, FilesBase: filesBase,
	}
}
