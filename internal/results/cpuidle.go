package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// CPUIdle is the cpuidle driver, governor and CPU 0's idle states, and
// the PM QoS limits that bound which of them a governor may select.
type CPUIdle struct {
	Driver   string      `json:"driver"`
	Governor string      `json:"governor"`
	States   []IdleState `json:"states,omitempty"`
	// Limits are the limits in force when the run began; nil where
	// they were not read (a run recorded before they were).
	Limits *IdleLimits `json:"limits,omitempty"`
}

// IdleLimits are the PM QoS limits on the idle states' exit latency
// (Documentation/admin-guide/pm/cpuidle.rst, "Power Management Quality of
// Service for CPUs": a CPU's bound is the smaller of the global limit and
// its own) and the haltpoll governor's poll window.
type IdleLimits struct {
	// GlobalUS is /dev/cpu_dma_latency's value in µs (tuned's
	// latency-performance profile holds it at 1); nil where it could not
	// be read (it needs root; a cluster node's is not reachable).
	GlobalUS *int64 `json:"cpu_dma_latency_us,omitempty"`
	// ResumeUS are the online CPUs' own limits
	// (cpuN/power/pm_qos_resume_latency_us) in µs, -1 for none ("0"),
	// 0 for "n/a" (no exit latency at all).
	ResumeUS map[int]int64 `json:"resume_latency_us,omitempty"`
	// HaltPollNS is haltpoll's guest_halt_poll_ns; nil without the module.
	HaltPollNS *int64 `json:"guest_halt_poll_ns,omitempty"`
}

// String is the driver, the governor and the states with their exit
// latencies, as the report's run metadata and compare show them: round
// trips wait for a woken core, so a reader comparing request/response
// numbers of two machines needs to know how their cores idle.
func (c CPUIdle) String() string {
	states := make([]string, len(c.States))
	for i, s := range c.States {
		states[i] = fmt.Sprintf("%s (%d µs)", s.Name, s.LatencyUS)
		if s.Disabled {
			states[i] += " disabled"
		}
	}
	out := fmt.Sprintf("driver %s, governor %s", c.Driver, c.Governor)
	if len(states) > 0 {
		out += "; states (exit latency): " + strings.Join(states, ", ")
	}
	if l := c.Limits.String(); l != "" {
		out += "; " + l
	}
	return out
}

// String names the limits that bound anything: the global one below its
// default (2000 s), the CPUs with limits of their own, a haltpoll poll
// window; "" when none does, so two machines with no limits read alike.
func (l *IdleLimits) String() string {
	if l == nil {
		return ""
	}
	var parts []string
	if l.GlobalUS != nil && *l.GlobalUS < 2000*1000*1000 {
		parts = append(parts, fmt.Sprintf("cpu_dma_latency %d µs", *l.GlobalUS))
	}
	byValue := map[int64]cpuset.Set{} // CPUs grouped by their own limit
	for c, us := range l.ResumeUS {
		if us >= 0 {
			byValue[us] = append(byValue[us], c)
		}
	}
	for _, us := range slices.Sorted(maps.Keys(byValue)) {
		cpus := byValue[us]
		slices.Sort(cpus)
		parts = append(parts, fmt.Sprintf("resume latency %d µs on CPUs %s", us, cpus))
	}
	if l.HaltPollNS != nil {
		parts = append(parts, fmt.Sprintf("guest_halt_poll_ns %d", *l.HaltPollNS))
	}
	if len(parts) == 0 {
		return ""
	}
	return "PM QoS: " + strings.Join(parts, ", ")
}

// IdleState is one idle state: its exit latency in microseconds, and
// whether it is disabled.
type IdleState struct {
	Name      string `json:"name"`
	LatencyUS int    `json:"latency_us"`
	Disabled  bool   `json:"disabled,omitempty"`
}
