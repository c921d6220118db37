package runner

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/study"
)

// checkIdleBounds refuses, for a run on this machine's nodes, a cpuIdle
// tuning whose bound no enabled idle state of CPU 0 exceeds: its trials
// would run with the machine as it is and be reported as the tuning's.
// Whether the CPUs have idle states at all is the feature check's
// (probe.CPUIdle); a cluster's nodes are read when a trial plans it.
func checkIdleBounds(s *study.Study, r cpuidle.Reader) error {
	for i, t := range s.Spec.Tunings {
		if t.CPUIdle == nil {
			continue
		}
		states, err := cpuidle.States(r, 0)
		if err != nil {
			return nil
		}
		maxUS := t.CPUIdle.MaxExitLatencyUS()
		if len(cpuidle.Slower(states, maxUS)) > 0 {
			continue
		}
		var have []string
		for _, st := range states {
			d := fmt.Sprintf("%s (%d µs)", st.Name, st.LatencyUS)
			if st.Disabled {
				d += " disabled"
			}
			have = append(have, d)
		}
		return study.At(fmt.Sprintf("spec.tunings[%d].cpuIdle.maxExitLatency", i),
			fmt.Errorf("tuning %s: no enabled idle state of this machine's CPU 0 exits slower than %d µs (%s): the bound would change nothing",
				t.Name, maxUS, strings.Join(have, ", ")))
	}
	return nil
}
