package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// checkIdleBounds refuses a cpuIdle tuning whose bound no enabled idle
// state of CPU 0 exceeds on a node the tuning goes on (its side: the
// server's node, the client's, or both): its trials would fail there
// when their plan finds the bound changes nothing (tune's idleChanges),
// after the run has built everything. idle holds CPU 0's states by node
// and the ends it holds (this machine's, both ends, on the local engine;
// each cluster node's, read by the agents at preflight). Whether the
// CPUs have idle states at all is the feature check's (probe.CPUIdle);
// a node without states here is not checked.
func checkIdleBounds(s *study.Study, idle []engine.NodeIdle) error {
	for i, t := range s.Spec.Tunings {
		if t.CPUIdle == nil {
			continue
		}
		maxUS := t.CPUIdle.MaxExitLatencyUS()
		for _, n := range idle {
			if !slices.ContainsFunc(t.Sides(), func(side string) bool { return slices.Contains(n.Sides, side) }) ||
				len(cpuidle.Slower(n.States, maxUS)) > 0 {
				continue
			}
			return study.At(fmt.Sprintf("spec.tunings[%d].cpuIdle.maxExitLatency", i),
				fmt.Errorf("tuning %s (side %s): no enabled idle state of %s CPU 0 exits slower than %d µs (%s): the bound would change nothing there",
					t.Name, strings.Join(t.Sides(), " and "), n.Where, maxUS, stateList(n.States)))
		}
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
// holding both ends; nil where it has none.
func localIdleStates(r cpuidle.Reader) []engine.NodeIdle {
	st, err := cpuidle.States(r, 0)
	if err != nil {
		return nil
	}
	return []engine.NodeIdle{{Where: "this machine's", Sides: []string{study.SideServer, study.SideClient}, States: st}}
}
