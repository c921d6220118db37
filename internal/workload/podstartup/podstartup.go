// Package podstartup is the pod start-up workload: each trial starts a
// burst of pods on the server node, as many at once as the study asks,
// and reports how long their networks took to be ready, with the
// breakdown of a pod's set-up into steps (seed 004's Fig. 15: network
// start-up latency by step, and creation latency as more pods start at
// once on one host).
//
// It runs no program: the engine makes the pods (engine.PodStarter). The
// local engine times its own pod set-up, the code path of the measured
// pods (namespace plus AttachPod, or the CNI plugins with wiring cni):
// the network's share alone, as it has no container runtime. The kube
// engine times real pods from create to Ready, as the paper timed whole
// pods (1.48 to 1.63 s there, of which 60 to 195 ms network).
package podstartup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// Metrics, in milliseconds; each is a mean over the burst's pods unless
// named _max.
const (
	// MetricStartup is how long after the burst began a pod's network was
	// ready: its own set-up plus any wait for a turn.
	MetricStartup = "startup_ms"
	// MetricStartupMax is when the last pod of the burst was ready.
	MetricStartupMax = "startup_max_ms"
	// MetricSetup is a pod's own network set-up (namespace and wiring).
	MetricSetup = "setup_ms"
	// MetricPodStart is, where the engine times whole pods (kube), a
	// pod's start from its create call to Ready: no network share, so
	// not setup_ms, which the paper's network start-up (Fig. 15a) is
	// set beside.
	MetricPodStart = "pod_start_ms"
	// MetricTeardown is a pod's network teardown.
	MetricTeardown = "teardown_ms"
	// MetricPods is how many pods the burst started.
	MetricPods = "pods"
	// PhasePrefix starts the metric of each step of the breakdown:
	// phase_link_ms, phase_cni_bridge_ms (spaces and '+' become '_').
	PhasePrefix = "phase_"
)

// MaxPods bounds the pods of one burst: a node holds 250 pods
// (datapath.MaxPodsPerNode), the measured pods included.
const MaxPods = 200

// Driver is the pod start-up workload.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Describe says what the workload takes and reports (see package spec).
func (*Driver) Describe() spec.Tool {
	return spec.Tool{
		Name: "podstartup",
		// No traffic flows; the protocol is the study's default and
		// changes nothing.
		Protocols: []string{"tcp"},
		Options: []spec.Option{
			{Name: study.OptConcurrency, Doc: "how many pods start at once; a list sweeps (Fig. 15b: 1, 5, 10, 20, 50)",
				Default: "1", Min: 1, Max: MaxPods, Note: "a node holds 250 pods, the measured ones included"},
			{Name: study.OptPods, Doc: "how many pods a trial starts, at most concurrency at a time",
				Unset: "as many as concurrency: all at once", Min: 1, Max: MaxPods, Note: "a node holds 250 pods, the measured ones included"},
		},
		Headline: []spec.Metric{{Name: MetricStartup}, {Name: MetricStartupMax}, {Name: MetricSetup}, {Name: MetricPodStart}, {Name: MetricTeardown}},
		Kube:     spec.Kube{Support: spec.KubeAll},
		Task:     true,
	}
}

// Check implements workload.Driver: the workload runs no program.
func (*Driver) Check() error { return nil }

// Run starts one burst on the server node of the first pair.
func (*Driver) Run(ctx context.Context, t workload.Trial) (workload.Result, error) {
	if t.Starter == nil {
		return workload.Result{}, errors.New("podstartup: this engine cannot start pods on demand")
	}
	if len(t.Pairs) == 0 {
		return workload.Result{}, errors.New("podstartup: no pod to say which node to start pods on")
	}
	conc := 1
	if len(t.Spec.Concurrency) > 0 {
		conc = t.Spec.Concurrency[0]
	}
	n := t.Spec.Pods
	if n == 0 {
		n = conc
	}
	if t.Started != nil {
		t.Started(time.Now())
	}
	times, err := t.Starter.StartPods(ctx, t.Pairs[0].Server.Node(), n, conc)
	if err != nil {
		return workload.Result{}, fmt.Errorf("podstartup: %w", err)
	}
	return workload.Result{Metrics: Summarize(times)}, nil
}

// Summarize turns a burst's pod times into the workload's metrics.
func Summarize(times []engine.PodTime) map[string]float64 {
	m := map[string]float64{MetricPods: float64(len(times))}
	if len(times) == 0 {
		return m
	}
	var ready, setup, down []float64
	phases := map[string]float64{}
	setupMetric := MetricSetup
	for _, pt := range times {
		if pt.WholePod {
			setupMetric = MetricPodStart
		}
		ready = append(ready, ms(pt.Ready))
		setup = append(setup, ms(pt.Setup))
		down = append(down, ms(pt.Teardown))
		for _, ph := range pt.Phases {
			phases[PhaseMetric(ph.Name)] += ms(ph.Took)
		}
	}
	m[MetricStartup] = stat.Mean(ready, nil)
	m[MetricStartupMax] = slices.Max(ready)
	m[setupMetric] = stat.Mean(setup, nil)
	m[MetricTeardown] = stat.Mean(down, nil)
	for k, v := range phases {
		m[k] = v / float64(len(times))
	}
	return m
}

// PhaseMetric is the metric of one step of the breakdown.
func PhaseMetric(phase string) string {
	return PhasePrefix + strings.NewReplacer(" ", "_", "+", "_", "-", "_").Replace(phase) + "_ms"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
