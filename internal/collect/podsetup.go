package collect

import (
	"context"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
)

// MetricPodSetup is the mean time to create and wire the network of the
// measured pods (namespace plus datapath attach), when the engine reports
// it.
const MetricPodSetup = "pod_setup_ms"

// Pod network setup latency is recorded on every run (the papers compare
// CNIs on it), not only with counters: true.
var podSetupEntry = Entry{
	Name:        "podsetup",
	Description: "mean time the engine took to create and wire the network of the measured pods (local engine's pods)",
	Metrics:     []string{MetricPodSetup},
	Enabled:     always,
	New:         func(t Trial) (Collector, error) { return podSetup{t}, nil },
}

// SetupTimer is implemented by pods that know how long their network
// took to set up (the local engine's pods).
type SetupTimer interface{ SetupLatency() time.Duration }

type podSetup struct{ t Trial }

func (podSetup) Start(context.Context) error { return nil }

func (c podSetup) Stop(context.Context) (Result, error) {
	// Every trial of a cell on the same pods shares their set-up: it is
	// one measurement, recorded with the first trial on them (a run of
	// several datapaths builds new pods each round, so each round's
	// trial records its own). A copy in each trial would count it n times
	// and give it an interval of zero width (and a p of nothing against
	// another datapath).
	if !c.t.FreshPods {
		return Result{}, nil
	}
	var sum time.Duration
	n := 0
	for _, p := range c.t.Pairs {
		for _, pod := range []engine.Pod{p.Server, p.Client} {
			if st, ok := pod.(SetupTimer); ok && st.SetupLatency() > 0 {
				sum += st.SetupLatency()
				n++
			}
		}
	}
	if n == 0 {
		return Result{}, nil
	}
	ms := float64(sum) / float64(n) / float64(time.Millisecond)
	return Result{Metrics: map[string]float64{MetricPodSetup: ms}}, nil
}
