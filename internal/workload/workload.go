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
	"fmt"
	"os/exec"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Pair is one client/server replica: the client sends to the server.
type Pair struct {
	Server engine.Pod
	Client engine.Pod
	// Port is the port the server pod listens on and its front (a
	// Service) forwards: engine.BasePort + the pod's index among the
	// server node's pods, so measured pair i's is Trial.BasePort+i and a
	// background pair's that of the pod carrying it.
	Port int
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
	// Starter starts pods on demand (the pod start-up workload); nil when
	// the engine cannot.
	Starter engine.PodStarter
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
	// Warnings say how to read a trial that counts but is not what was
	// asked (a sender that fell behind its rate); one wording per kind,
	// so that the runner reports each once (env.json notes).
	Warnings []string
}

// Driver runs one workload tool.
type Driver interface {
	// Describe says what the tool is to the rest of cnibench: its name in
	// study files, protocols, options with defaults and bounds, programs,
	// headline metrics and kube support (see package spec).
	Describe() spec.Tool
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

// CommonOptions are the options every driver accepts, because the runner
// and the engine, not the tool, carry them out: where the pods are, CPU
// pinning (workload.Pinned), CPU cost per packet and counters. A driver
// appends them to its own options in Describe.
func CommonOptions() []spec.Option {
	return []spec.Option{
		{Name: study.OptPlacement, Doc: "where the client runs: inter-node or intra-node", Default: study.PlacementInterNode},
		{Name: study.OptPin, Doc: "CPU lists or placement names (same-numa, other-numa, same-core, other-core, none) of the server and the client",
			Unset:    "not pinned: the node's CPUs",
			Programs: []spec.Program{{Name: "taskset", Package: "util-linux", Version: []string{"taskset", "--version"}}}},
		{Name: study.OptCPP, Doc: "CPU cost per packet, sampled with perf", Unset: "not sampled",
			Programs: []spec.Program{{Name: "perf", Package: "linux-perf", Version: []string{"perf", "--version"}}}},
		{Name: study.OptTarget, Doc: "what the client addresses: pod (the server pod's IP), service (a ClusterIP through kube-proxy's rules) or hairpin (that Service from inside the server pod)",
			Unset: "the engine's own: pod IP locally, the Service on a cluster"},
		{Name: study.OptCounters, Doc: "device counters, the iptables and nftables rules packets traversed, and the measured packets' own netfilter path (an nf_tables trace)", Unset: "not recorded",
			Programs: []spec.Program{
				{Name: "iptables-save", Package: "iptables", Version: []string{"iptables-save", "--version"}},
				{Name: "nft", Package: "nftables", Version: []string{"nft", "--version"}},
			}},
	}
}

// LookProgram finds bin, a driver's program p, on PATH; the error names
// the Debian package that ships it.
func LookProgram(bin string, p spec.Program) (string, error) {
	if path, err := exec.LookPath(bin); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%s is not installed or not in PATH; install it (Debian/Ubuntu: apt-get install %s)", bin, p.Package)
}
