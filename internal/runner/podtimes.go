package runner

import (
	"slices"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/results"
)

// podNetworkTimes summarises per-pod network setup and teardown times
// (milliseconds); nil when the cluster had no pod networks (host).
func podNetworkTimes(ts []engine.PodTime) *results.PodNetworkEnv {
	var setup, down []float64
	for _, t := range ts {
		setup = append(setup, ms(t.Setup))
		if t.Teardown > 0 {
			down = append(down, ms(t.Teardown))
		}
	}
	if len(setup) == 0 {
		return nil
	}
	return &results.PodNetworkEnv{
		Pods: len(setup), SetupMedianMs: median(setup), SetupMaxMs: slices.Max(setup),
		TeardownPods: len(down), TeardownMedianMs: median(down), TeardownMaxMs: maxOr0(down),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func maxOr0(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return slices.Max(v)
}
