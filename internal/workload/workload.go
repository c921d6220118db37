// Package workload defines what every traffic generator driver implements.
// A driver runs its tool in pods given by the engine, so the same driver
// serves the local engine (network namespaces) and the kube engine.
//
// The list of drivers is in the registry subpackage: drivers import this
// package for Trial and Result, so the list cannot live here without an
// import cycle, and an explicit list is preferred over init() registration.
package workload

import (
	"context"
	"errors"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// Pair is one client/server replica: the client sends to the server.
type Pair struct {
	Server engine.Pod
	Client engine.Pod
}

// Trial is one repetition of one cell, as a driver needs it.
type Trial struct {
	Pairs []Pair
	// Background are extra pairs that carry the workload's background
	// load (Spec.Background) while Pairs are measured; nil without one.
	Background []Pair
	// Spec names the tool, the protocol and the buffer length.
	Spec study.Workload
	// Duration is the whole trial per client, warm-up included.
	Duration time.Duration
	// Warmup is the start of the trial left out of the measurement
	// (iperf3 -O), so slow start and cold caches do not count.
	Warmup time.Duration
	// BasePort is the server port of pair 0; pair i uses BasePort+i.
	BasePort int
	// Started, when set, is called once, after every client has been
	// started (not at all when one fails to start). The runner starts its
	// CPU sampling window Warmup after it. A driver may restart a client
	// that could not connect yet; that costs milliseconds of the warm-up.
	Started func(time.Time)
}

// Result is what a trial measured. Metric names are those of the results
// package (results.MetricBitrate, ...).
type Result struct {
	// Metrics are the trial's scalars (e.g. mean and sum over replicas).
	Metrics map[string]float64
	// PerReplica holds one map per pair, in pair order.
	PerReplica []map[string]float64
	// Series holds per-interval series per pair (e.g. cwnd each second),
	// in pair order; nil when the tool has none.
	Series []map[string][]float64
}

// Driver runs one workload tool.
type Driver interface {
	// Tool is the name used in study files ("iperf3").
	Tool() string
	// Protocols lists the protocols the driver can run ("tcp", "udp").
	Protocols() []string
	// Check reports whether the tool can run here: one error naming the
	// missing program and how to install it.
	Check() error
	// Run runs one trial and returns once every process it started has
	// exited, also when ctx is cancelled or it fails.
	Run(ctx context.Context, t Trial) (Result, error)
}

// ErrUnknownTool is returned by lookups of a tool no driver implements.
var ErrUnknownTool = errors.New("unknown workload tool")

// Pinned wraps argv so the program runs on the given CPU list
// (taskset -c CPUS argv...); an empty list returns argv unchanged. taskset
// is used rather than each tool's own affinity flag so pinning works the
// same for every tool and accepts any list.
func Pinned(argv []string, cpus string) []string {
	if cpus == "" {
		return argv
	}
	return append([]string{"taskset", "-c", cpus}, argv...)
}
