package runner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/study"
)

// checkIdleBounds refuses a cpuIdle tuning whose bound no enabled idle
// state of CPU 0 of the run's nodes exceeds: its trials would run with
// the machine as it is and be reported as the tuning's. states are CPU 0's
// states by where they were read ("this machine's" on the local engine,
// "node NAME's" for each cluster node the agents read at preflight). A
// bound that changes something on any of them passes: the tuning's side
// decides which node it goes on, and its trial's plan checks that one
// again. Whether the CPUs have idle states at all is the feature check's
// (probe.CPUIdle); no states here means nothing to check.
func checkIdleBounds(s *study.Study, states map[string][]cpuidle.State) error {
	where := make([]string, 0, len(states))
	for w := range states {
		where = append(where, w)
	}
	sort.Strings(where)
	for i, t := range s.Spec.Tunings {
		if t.CPUIdle == nil || len(states) == 0 {
			continue
		}
		maxUS := t.CPUIdle.MaxExitLatencyUS()
		var have []string
		bounds := false
		for _, w := range where {
			bounds = bounds || len(cpuidle.Slower(states[w], maxUS)) > 0
			if len(where) > 1 {
				have = append(have, w+": "+stateList(states[w]))
			} else {
				have = append(have, stateList(states[w]))
			}
		}
		if bounds {
			continue
		}
		return study.At(fmt.Sprintf("spec.tunings[%d].cpuIdle.maxExitLatency", i),
			fmt.Errorf("tuning %s: no enabled idle state of %s CPU 0 exits slower than %d µs (%s): the bound would change nothing",
				t.Name, strings.Join(where, " or "), maxUS, strings.Join(have, "; ")))
	}
	return nil
}

// stateList is "POLL (0 µs), C1 (2 µs), C6 (133 µs) disabled".
func stateList(states []cpuidle.State) string {
	var out []string
	for _, st := range states {
		d := fmt.Sprintf("%s (%d µs)", st.Name, st.LatencyUS)
		if st.Disabled {
			d += " disabled"
		}
		out = append(out, d)
	}
	return strings.Join(out, ", ")
}

// localIdleStates are this machine's CPU 0 states for checkIdleBounds,
// nil where it has none.
func localIdleStates(r cpuidle.Reader) map[string][]cpuidle.State {
	st, err := cpuidle.States(r, 0)
	if err != nil {
		return nil
	}
	return map[string][]cpuidle.State{"this machine's": st}
}
