package advise

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// Which idle states a core can still enter under the limits that bound
// them (inspect.IdleQoS). A slow state (cpuidle.SlowWake) is a reason
// for cpu-idle only where a governor may still select it: after `tuned-adm
// profile latency-performance` (/dev/cpu_dma_latency held at 1 µs) the
// menu and teo governors leave C-states above 1 µs alone, and the rule
// must not stay a candidate. The governors differ:
//   - menu, teo and ladder skip a state whose exit latency exceeds the
//     CPU's limit, the smaller of the global one and its own
//     (cpuidle.rst, "Power Management Quality of Service for CPUs"), and
//     a state disabled through its `disable` file;
//   - the haltpoll governor of a KVM guest honours only a limit of 0, and
//     no `disable` file (drivers/cpuidle/governors/haltpoll.c,
//     haltpoll_select: it polls when the limit is 0 and otherwise halts
//     once its poll window passed; seen on this machine, docs/advise.md).
//     Its window is guest_halt_poll_ns at most, grown toward it while
//     wake-ups come within it (guest-halt-polling.rst).

// idleWakeSlow is the idle_wake_slow fact: some CPU may still enter a
// state slow to leave under the machine's limits, with what was read.
func idleWakeSlow(in *inspect.Inspection) (value, error) {
	// A run's record without cpuidle says nothing of the machine.
	if err := known(in, "cpuidle"); err != nil {
		return value{}, err
	}
	if in.CPUIdle == nil {
		// Nothing bounds that while the kernel runs: say what would.
		return value{}, errors.New("no cpuidle driver: the CPUs idle one way only (the kernel's default halt, " +
			"a VM exit on a virtual machine, or idle=poll's spinning), which no run-time limit changes; booting with " +
			"idle=poll, or on a KVM guest cpuidle_haltpoll.force=1, would")
	}
	states, limits, err := reachable(in)
	if err != nil {
		return value{}, err
	}
	var slow []string
	for _, s := range states {
		if isSlow(in.CPUIdle, s) {
			slow = append(slow, fmt.Sprintf("%s %d µs", s.Name, s.LatencyUS))
		}
	}
	v := yes(len(slow) > 0)
	v.note = limits
	if len(slow) > 0 {
		v.note = "reachable: " + strings.Join(slow, ", ") + "; " + limits
	}
	return v, nil
}

// isSlow is cpuidle.SlowWake's test for one state.
func isSlow(c *results.CPUIdle, s results.IdleState) bool {
	return s.LatencyUS >= cpuidle.SlowWakeUS || (c.Driver == "haltpoll" && s.LatencyUS > 0)
}

// reachable are CPU 0's states other than polling that a governor may
// still select on some CPU under the limits, and the limits in words.
func reachable(in *inspect.Inspection) ([]results.IdleState, string, error) {
	q := in.IdleQoS
	if q == nil {
		return nil, "", errors.New("the PM QoS limits were not read (an inspection from before they were)")
	}
	if q.GlobalUS == nil {
		if err := known(in, "cpu_dma_latency"); err != nil {
			return nil, "", err
		}
		return nil, "", errors.New("cpu_dma_latency not read")
	}
	if err := known(in, "pm_qos_resume_latency_us", "guest_halt_poll_ns"); err != nil {
		return nil, "", err
	}
	loosest, err := loosestLimit(in)
	if err != nil {
		return nil, "", err
	}
	haltpoll := in.CPUIdle.Governor == "haltpoll"
	var out []results.IdleState
	for _, s := range in.CPUIdle.States {
		switch {
		case s.LatencyUS == 0:
		case haltpoll:
			if loosest != 0 && (q.HaltPollNS == nil || *q.HaltPollNS < cpuidle.HaltPollCoversNS) {
				out = append(out, s)
			}
		case !s.Disabled && int64(s.LatencyUS) <= loosest:
			out = append(out, s)
		}
	}
	return out, limitsText(q, loosest, haltpoll), nil
}

// loosestLimit is the largest of the CPUs' limits, each the smaller of
// the global one and its own: a state within it is reachable on some CPU.
func loosestLimit(in *inspect.Inspection) (int64, error) {
	q := in.IdleQoS
	online, err := onlineCPUs(in)
	if err != nil {
		return 0, err
	}
	loosest := int64(-1)
	for _, c := range online {
		l := *q.GlobalUS
		if own, ok := q.ResumeUS[c]; ok {
			l = min(l, own)
		}
		loosest = max(loosest, l)
	}
	return loosest, nil
}

// limitsText says the limits that decided: "PM QoS: cpu_dma_latency 1
// µs (tuned's latency-performance holds it so), no per-CPU limit".
func limitsText(q *inspect.IdleQoS, loosest int64, haltpoll bool) string {
	g := "the default (no request)"
	if *q.GlobalUS < inspect.DefaultDMALatencyUS {
		g = fmt.Sprintf("%d µs", *q.GlobalUS)
	}
	out := "PM QoS: cpu_dma_latency " + g
	if len(q.ResumeUS) == 0 {
		out += ", no per-CPU limit"
	} else {
		var cpus cpuset.Set
		for c := range q.ResumeUS {
			cpus = append(cpus, c)
		}
		slices.Sort(cpus)
		out += fmt.Sprintf(", per-CPU limits on CPUs %s, the loosest CPU's %d µs", cpus, loosest)
	}
	if haltpoll {
		switch {
		case q.HaltPollNS == nil:
		case *q.HaltPollNS == 0:
			out += "; haltpoll halts at once (guest_halt_poll_ns 0)"
		default:
			out += fmt.Sprintf("; haltpoll polls up to %d ns before it halts (guest_halt_poll_ns)", *q.HaltPollNS)
		}
		out += "; the haltpoll governor halts at any limit above 0"
	}
	return out
}
