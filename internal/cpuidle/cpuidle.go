// Package cpuidle reads the kernel's CPU idle states from sysfs and names
// the file that bounds which of them a CPU may enter
// (Documentation/admin-guide/pm/cpuidle.rst, "Representation of Idle
// States" and "Power Management Quality of Service for CPUs"). A
// request/response round trip waits for the receiving core to wake, and
// how long that takes is the exit latency of the state the core slept
// in: a run records the states (env.json), the advisor reads them, a
// tuning bounds them for its trials (tune.Plan), and the CPU sampler
// counts the time spent polling (PollTimes), which /proc/stat calls idle.
//
// Everything goes through a sysfs.Reader, so the same code reads this
// machine's /sys, a test's fixture, or a cluster node's sysfs through its
// agent.
package cpuidle

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// Dir is where the CPUs are, relative to the sysfs root.
const Dir = "devices/system/cpu"

// ErrNone means a CPU has no idle states to choose from: the kernel has
// no cpuidle driver (idle=poll or idle=halt on its command line, or a
// guest without cpuidle-haltpoll), so it idles the one way it knows.
var ErrNone = errors.New("no cpuidle states (the kernel has no cpuidle driver)")

// Reader reads the CPUs' sysfs files.
type Reader = sysfs.Reader

// State is one idle state of a CPU.
type State struct {
	Index int
	Name  string
	// LatencyUS is the exit latency the driver states, in microseconds.
	LatencyUS int
	Disabled  bool
}

// States returns a CPU's idle states in index order (state10 after
// state9). A state without a readable latency is left out; a CPU without
// any is ErrNone.
func States(r Reader, cpu int) ([]State, error) {
	dir := path.Join(Dir, "cpu"+strconv.Itoa(cpu), "cpuidle")
	names, err := r.List(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(names) == 0) {
		return nil, fmt.Errorf("CPU %d: %w", cpu, ErrNone)
	}
	if err != nil {
		return nil, fmt.Errorf("CPU %d: list its idle states: %w", cpu, err)
	}
	var out []State
	for _, n := range names {
		i, err := strconv.Atoi(strings.TrimPrefix(n, "state"))
		if !strings.HasPrefix(n, "state") || err != nil {
			continue
		}
		sd := path.Join(dir, n)
		// An unsigned count of µs (drivers/cpuidle/sysfs.c prints it
		// "%llu"): a negative one is no latency read.
		lat, err := read(r, path.Join(sd, "latency"))
		l, perr := strconv.Atoi(lat)
		if err != nil || perr != nil || l < 0 {
			continue
		}
		name, _ := read(r, path.Join(sd, "name"))
		dis, _ := read(r, path.Join(sd, "disable"))
		out = append(out, State{Index: i, Name: name, LatencyUS: l, Disabled: dis == "1"})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU %d: %w", cpu, ErrNone)
	}
	slices.SortFunc(out, func(a, b State) int { return a.Index - b.Index })
	return out, nil
}

func read(r Reader, p string) (string, error) {
	v, err := r.Read(p)
	return strings.TrimSpace(v), err
}

// LimitPath is a CPU's PM QoS resume latency limit (Documentation/ABI/
// testing/sysfs-devices-power, pm_qos_resume_latency_us). Every cpuidle
// governor (menu, teo, ladder, haltpoll) takes the smaller of it and the
// global /dev/cpu_dma_latency as the bound on the exit latency of the
// states it may select for the CPU (cpuidle_governor_latency_req). The
// per-state disable files are not honoured by all: the haltpoll
// governor of a KVM guest enters its halting state regardless.
func LimitPath(cpu int) string {
	return path.Join(Dir, "cpu"+strconv.Itoa(cpu), "power", LimitKnob)
}

// LimitValue is what LimitPath takes for a bound of us microseconds.
// The file reads "0" for no limit, so a bound of 0 (poll only) is
// written "n/a", the kernel's word for "no resume latency at all".
func LimitValue(us int) string {
	if us == 0 {
		return "n/a"
	}
	return strconv.Itoa(us)
}

// LimitKnob is the limit file's name, as a run's record of what a tuning
// set names it.
const LimitKnob = "pm_qos_resume_latency_us"

// LimitText says what a value of the limit file means.
func LimitText(v string) string {
	switch v = strings.TrimSpace(v); v {
	case "0":
		return "no limit"
	case "n/a":
		return "0 µs: polling only"
	}
	return v + " µs at most"
}

// ParseLimitPath is LimitPath's inverse; ok is false for any other path.
func ParseLimitPath(p string) (cpu int, ok bool) {
	rest, found := strings.CutPrefix(p, Dir+"/cpu")
	if !found {
		return 0, false
	}
	num, tail, _ := strings.Cut(rest, "/")
	c, err := strconv.Atoi(num)
	if err != nil || c < 0 || strconv.Itoa(c) != num || tail != "power/"+LimitKnob {
		return 0, false
	}
	return c, true
}

// Machine is how the machine idles, as env.json records it: the driver,
// the governor and CPU 0's states. Nil where there is no cpuidle driver.
func Machine(r Reader) *results.CPUIdle {
	drv, _ := read(r, path.Join(Dir, "cpuidle/current_driver"))
	if drv == "" || drv == "none" {
		return nil
	}
	gov, _ := read(r, path.Join(Dir, "cpuidle/current_governor"))
	if gov == "" {
		gov, _ = read(r, path.Join(Dir, "cpuidle/current_governor_ro"))
	}
	c := &results.CPUIdle{Driver: drv, Governor: gov}
	states, _ := States(r, 0)
	for _, s := range states {
		c.States = append(c.States, results.IdleState{Name: s.Name, LatencyUS: s.LatencyUS, Disabled: s.Disabled})
	}
	return c
}

// SlowWakeUS is the exit latency from which a wake-up counts as slow: a
// request/response round trip between pods takes some tens of µs, so a
// wake-up of 10 µs or more is a visible part of it.
const SlowWakeUS = 10

// SlowWake are the states of a machine's CPU 0 that are slow to leave
// and that a governor may still select on some CPU: those exiting in
// SlowWakeUS or more, and the halting state of the haltpoll driver (a
// KVM guest's), whose stated latency leaves out the hypervisor's part (a
// VM exit, and an IPI to wake the vCPU). Under the recorded limits
// (c.Limits; none recorded: the disable files alone): menu, teo and
// ladder skip a disabled state and one slower than the loosest CPU's
// bound; the haltpoll governor ignores the disable files and halts at
// any bound above 0 once its poll window passed, which from
// HaltPollCoversNS on outlasts a round trip's gap
// (drivers/cpuidle/governors/haltpoll.c, haltpoll_select). Nil when the
// machine has none, or no cpuidle driver.
func SlowWake(c *results.CPUIdle) []results.IdleState {
	if c == nil {
		return nil
	}
	loosest, bounded := Loosest(c.Limits)
	var out []results.IdleState
	for _, s := range c.States {
		slow := s.LatencyUS >= SlowWakeUS || (c.Driver == "haltpoll" && s.LatencyUS > 0)
		switch {
		case !slow:
		case c.Governor == "haltpoll":
			polls := c.Limits != nil && c.Limits.HaltPollNS != nil && *c.Limits.HaltPollNS >= HaltPollCoversNS
			if !(bounded && loosest == 0) && !polls {
				out = append(out, s)
			}
		case !s.Disabled && (!bounded || int64(s.LatencyUS) <= loosest):
			out = append(out, s)
		}
	}
	return out
}

// Slower are the enabled states of a CPU whose exit latency exceeds
// maxUS: what a limit of maxUS keeps the CPU out of. The polling state
// (latency 0) is never among them.
func Slower(states []State, maxUS int) []State {
	var out []State
	for _, s := range states {
		if s.LatencyUS > maxUS && !s.Disabled {
			out = append(out, s)
		}
	}
	return out
}
