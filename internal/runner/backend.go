package runner

import (
	"context"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// backend is what the runner needs from an engine beyond engine.Cluster:
// its own preflight, how to build a cluster for a datapath, how knobs are
// read and written on its nodes, and how a node's CPU is sampled. The
// local engine implements it here; a remote engine implements it through
// its node agent.
type backend interface {
	// name is the engine's name for env.json ("local").
	name() string
	// preflight checks what the engine needs; it changes nothing.
	preflight(ctx context.Context, s *study.Study, p *plan) error
	// up builds (or, on a real cluster, prepares) the cluster for one
	// datapath of the study.
	up(ctx context.Context, r *run, d study.Datapath) (engine.Cluster, error)
	// configure applies a datapath entry's node knobs (offloads) to a
	// cluster up() built, and says how the datapath was built.
	configure(ctx context.Context, r *run, c engine.Cluster, d study.Datapath) (results.DatapathEnv, error)
	// fs reads and writes sysfs/procfs knobs on the cluster's nodes.
	fs() tune.FS
	// sampler samples the CPU of a node over a trial's measured window.
	sampler(n engine.Node) cpuSampler
	// reader reads a node's device counters, memory and CPU cost per
	// packet (reader.go).
	reader(n engine.Node) nodeReader
	// describe adds engine facts (offloads, steering, notes) to env.json.
	describe(r *run, c engine.Cluster, e *results.Env)
}

// cpuSampler is the metrics.Sampler contract.
type cpuSampler interface {
	Start() error
	Stop() (metrics.Window, error)
}
