package seen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// idleWake: the run's request/response cells (a workload whose rate is
// set by round trips, spec.Tool.RoundTrips) on CPUs that idle in states
// slow to leave (env.json's cpuidle, the server node's on a cluster;
// cpuidle.SlowWake), so that each round trip may have waited for a core
// to wake. Cells of a tuning that bounds the idle states (cpuIdle) are
// left out: they measured the answer, whose decisions against the
// baseline are the lean (boundLean); so are cells of fewer than
// minTrials trials. Each named cell gives its rate, the tool's first
// headline metric, as the run's report has it. A run whose study no
// longer resolves (s nil) shows nothing: only the study says which of
// its workloads are request/response.
func idleWake(run *results.Run, s *study.Study) found {
	if s == nil || !run.HasEnv {
		return found{}
	}
	slow := cpuidle.SlowWake(run.Env.CPUIdle)
	if len(slow) == 0 {
		return found{}
	}
	rate := map[string]string{} // variant name -> its rate metric
	for _, w := range s.Variants() {
		if t, ok := registry.Describe(w.Tool); ok && t.RoundTrips && len(t.Headline) > 0 {
			rate[w.Name] = t.Headline[0].Name
		}
	}
	bounded := map[string]bool{}
	var bounding []string
	for _, t := range s.Spec.Tunings {
		bounded[t.Name] = t.CPUIdle != nil
		if t.CPUIdle != nil {
			bounding = append(bounding, t.Name)
		}
	}
	values := map[results.Cell][]float64{}
	var cells []results.Cell
	for _, smp := range run.Samples {
		m, ok := rate[smp.Cell.Workload]
		v, has := smp.Metrics[m]
		if !ok || !has || bounded[smp.Cell.Tuning] {
			continue
		}
		if _, seen := values[smp.Cell]; !seen {
			cells = append(cells, smp.Cell)
		}
		values[smp.Cell] = append(values[smp.Cell], v)
	}
	cells = slices.DeleteFunc(cells, func(c results.Cell) bool { return len(values[c]) < minTrials })
	if len(cells) == 0 {
		return found{}
	}
	states := make([]string, len(slow))
	for i, st := range slow {
		states[i] = fmt.Sprintf("%s, %d µs", st.Name, st.LatencyUS)
		if run.Env.CPUIdle.Driver == "haltpoll" {
			states[i] += " stated; a halted vCPU waits for the hypervisor"
		}
	}
	named := someOf(len(cells), func(i int) string {
		c := cells[i]
		m := rate[c.Workload]
		d := analysis.Describe(m, values[c])
		return fmt.Sprintf("%s %s %s (mean of %s)", report.CellName(c), analysis.Display(m).Format(d.Mean), m, trials(d.N))
	})
	text := fmt.Sprintf("%d request/response cells ran on CPUs that idle in states slow to leave (%s; %s), so each round "+
		"trip may have waited for a core to wake: %s", len(cells), strings.Join(states, "; "), limitsNote(run.Env.CPUIdle.Limits), named)
	answer := boundLean(run, s, bounded, rate)
	switch {
	case len(bounding) > 0 && !answer.empty():
		text += fmt.Sprintf("; the run's tuning %s bounds the idle states, against %s: %s of its request/response cells",
			strings.Join(bounding, ", "), s.Spec.Baseline, answer)
	case len(bounding) > 0:
		text += fmt.Sprintf("; the run's tuning %s bounds the idle states (its decisions are in the run's report)", strings.Join(bounding, ", "))
	}
	lean := advise.LeanFor // slow wake-ups are the problem cpu-idle answers
	if answer.decided() > 0 {
		lean = leanOf(answer, string(stats.Better), string(stats.Worse))
	}
	return found{text: text, cells: cells, lean: lean}
}

// boundLean tallies the run's decisions of its tunings that bound the
// idle states (bounded) against the baseline in its request/response
// cells (rate), of at least minTrials trials: the run measured the
// answer there. Worse or equal in every decided cell is the run's
// result against cpu-idle, never a reason for it, as steering's is for
// rfs (steerLean).
func boundLean(run *results.Run, s *study.Study, bounded map[string]bool, rate map[string]string) tally {
	var t tally
	for _, st := range run.Stops {
		if !bounded[st.Cell.Tuning] || rate[st.Cell.Workload] == "" || st.Decision == "" ||
			report.StopVersus(st, s.Spec.Baseline) != s.Spec.Baseline || st.Judged() < minTrials {
			continue
		}
		t.add(st.Decision)
	}
	return t
}

// limitsNote says what the PM QoS limits the run began with allowed
// (cpuidle.SlowWake already left out the states they kept the cores out
// of), or that the run's record has none: a run recorded before env.json
// kept them, whose limits (tuned's latency-performance) may have.
func limitsNote(l *results.IdleLimits) string {
	us, ok := cpuidle.Loosest(l)
	switch {
	case !ok:
		return "the run's record has no PM QoS limits, which may have kept the cores out of them"
	case l.GlobalUS == nil && us >= cpuidle.DefaultDMALatencyUS:
		return "no CPU has a PM QoS limit of its own; the global one, /dev/cpu_dma_latency, was not read"
	case l.GlobalUS == nil:
		return "reachable under the CPUs' own PM QoS limits (the loosest " + strconv.FormatInt(us, 10) +
			" µs); the global one, /dev/cpu_dma_latency, was not read"
	}
	return "reachable under the PM QoS limits the run began with"
}
