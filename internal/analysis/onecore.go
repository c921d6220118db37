package analysis

import (
	"cmp"
	"slices"

	"github.com/cnibench/cnibench/internal/results"
)

// A second is bound by one core when one core of a node was busy at
// least OneCoreBusy percent of it while another was idle at least
// OneCoreIdle percent, and a trial is when at least half of its seconds
// are: its number is what one core could do, not what the node could. On
// one machine it is the rule rather than the exception: a veth pair has a
// single receive queue, so a flow's packet work runs in softirq on the
// core that sent it (at high load often the receiver's, whose ACKs clock
// the sender's segments out), and the scheduler wakes the receiving
// process on that core too. Which core that is changes between trials and
// within one (an HTTP load on flannel moved every few seconds on
// 2026-11-29: 100% and 12% busy, then 12% and 100%), so the judgement
// follows the busy core second by second (cpu.jsonl): the trial's means
// of each core would read as two half-busy cores. A trial without
// per-second samples (the client node's, a run written before the points
// came first, killed between its sample and its points) is judged by
// those means.
const (
	OneCoreBusy = 95.0
	OneCoreIdle = 50.0
)

// OneCore is how many of a cell's trials one core of a node bound; the
// cell is listed (Listed) when at least half were.
type OneCore struct {
	Cell results.Cell `json:"cell"`
	// Node is "server" (Sample.Cores; on emulated nodes the machine's
	// cores) or "client" (Sample.ClientCores, a node with its own kernel).
	Node string `json:"node"`
	// Bound of the cell's N trials were bound by one core.
	Bound int `json:"bound_trials"`
	N     int `json:"n"`
	// BusyCPUs are the cores that were the busy one in the bound trials'
	// bound seconds; BusyPct is the busy core's mean busy share (100 -
	// idle) over those seconds, SoftIRQPct the mean share of its time in
	// softirq, and IdlePct the mean idle share of the idlest other core.
	BusyCPUs   []int   `json:"busy_cpus"`
	BusyPct    float64 `json:"busy_pct"`
	SoftIRQPct float64 `json:"softirq_pct"`
	IdlePct    float64 `json:"idle_pct"`
}

// OneCoreCells lists the cells at least half of whose trials were bound
// by one core (OneCore.Listed), in the order the cells' first samples
// come, the server node's before the client node's for a cell. points
// are the run's per-second samples of the server node's cores (Run.CPU),
// machine the CPUs the run could use (Env.MachineCPUs; OneCoreTally).
func OneCoreCells(samples []results.Sample, points []results.CPUPoint, machine []int) []OneCore {
	var out []OneCore
	for _, oc := range OneCoreTally(samples, points, machine) {
		if oc.Listed() {
			out = append(out, oc)
		}
	}
	return out
}

// Listed says that at least half of the cell's trials were bound by one
// core: its numbers are, as a rule, one core's.
func (oc OneCore) Listed() bool { return oc.Bound > 0 && 2*oc.Bound >= oc.N }

// OneCoreTally counts, for every cell and node with per-core samples,
// the trials bound by one core, bound or not (a comparison of runs needs
// "0 of 4" as much as "3 of 4"); the shares are means over the bound
// trials (0 without any), each trial's over its bound seconds. A node
// with a single sampled core is left out: there is no other core to have
// idled. machine are the CPUs the local engine's nodes could use
// (Env.MachineCPUs; nil: every core sampled): the server node's cores
// are every CPU of the machine's /proc/stat, and one outside cnibench's
// cpuset runs none of its work, so its idling says nothing of the run
// (in a container limited to CPUs 0-1 of 8, an idle CPU 2 made every
// cell with CPU 0 busy one core's).
func OneCoreTally(samples []results.Sample, points []results.CPUPoint, machine []int) []OneCore {
	type key struct {
		cell   results.Cell
		client bool
	}
	seconds := secondsOf(points)
	acc := map[key]*OneCore{}
	var order []key
	for _, s := range samples {
		for _, client := range []bool{false, true} {
			windows := [][]results.CoreStat{s.Cores}
			if client {
				windows = [][]results.CoreStat{s.ClientCores}
			} else if sec := seconds[trialKey{s.Cell, s.Trial}]; len(sec) > 0 {
				windows = sec
			}
			if !client {
				windows = within(windows, machine)
			}
			windows = measured(windows)
			if len(windows[0]) < 2 {
				continue
			}
			k := key{s.Cell, client}
			oc := acc[k]
			if oc == nil {
				oc = &OneCore{Cell: s.Cell, Node: "server"}
				if client {
					oc.Node = "client"
				}
				acc[k] = oc
				order = append(order, k)
			}
			oc.N++
			t, ok := trialBound(windows)
			if !ok {
				continue
			}
			oc.count(t.BusyCPUs, t.BusyPct, t.SoftIRQPct, t.IdlePct)
		}
	}
	var out []OneCore
	for _, k := range order {
		acc[k].average()
		out = append(out, *acc[k])
	}
	return out
}

// within is windows with only the cores of cpus (nil: all of them).
func within(windows [][]results.CoreStat, cpus []int) [][]results.CoreStat {
	if len(cpus) == 0 {
		return windows
	}
	out := make([][]results.CoreStat, len(windows))
	for i, cores := range windows {
		for _, c := range cores {
			if slices.Contains(cpus, c.CPU) {
				out[i] = append(out[i], c)
			}
		}
	}
	return out
}

// measured is windows without the cores whose percentages are no
// measurement (CoreStat.Measured): a CPU offline at the window's end has
// zeros, 0% idle, which boundBy took for a core 100% busy.
func measured(windows [][]results.CoreStat) [][]results.CoreStat {
	out := make([][]results.CoreStat, len(windows))
	for i, cores := range windows {
		for _, c := range cores {
			if c.Measured() {
				out[i] = append(out[i], c)
			}
		}
	}
	return out
}

// count adds one bound window (a second of a trial) or trial (of a cell)
// to oc: its busy cores, and its shares to the sums average divides.
func (oc *OneCore) count(cpus []int, busy, softirq, idle float64) {
	oc.Bound++
	for _, c := range cpus {
		if !slices.Contains(oc.BusyCPUs, c) {
			oc.BusyCPUs = append(oc.BusyCPUs, c)
		}
	}
	oc.BusyPct += busy
	oc.SoftIRQPct += softirq
	oc.IdlePct += idle
}

// average turns count's sums into means over the bound ones.
func (oc *OneCore) average() {
	if oc.Bound == 0 {
		return
	}
	n := float64(oc.Bound)
	oc.BusyPct, oc.SoftIRQPct, oc.IdlePct = oc.BusyPct/n, oc.SoftIRQPct/n, oc.IdlePct/n
	slices.Sort(oc.BusyCPUs)
}

type trialKey struct {
	cell  results.Cell
	trial int
}

// secondsOf groups per-second points by trial, each second's cores
// together, in time order.
func secondsOf(points []results.CPUPoint) map[trialKey][][]results.CoreStat {
	type at struct {
		trialKey
		unixNano int64
	}
	idx := map[at]int{}
	out := map[trialKey][][]results.CoreStat{}
	for _, p := range points {
		tk := trialKey{p.Cell, p.Trial}
		a := at{tk, p.Time.UnixNano()}
		i, ok := idx[a]
		if !ok {
			i = len(out[tk])
			idx[a] = i
			out[tk] = append(out[tk], nil)
		}
		out[tk][i] = append(out[tk][i], results.CoreStat{CPU: p.CPU, CPUPercent: p.CPUPercent})
	}
	return out
}

// trialBound judges a trial by its windows (seconds, or one window of
// the trial's means): bound when at least half of them are, with the
// busy cores and the mean shares over the bound ones.
func trialBound(windows [][]results.CoreStat) (OneCore, bool) {
	var t OneCore
	for _, cores := range windows {
		if busy, idle, ok := boundBy(cores); ok {
			t.count([]int{busy.CPU}, 100-busy.Idle, busy.SoftIRQ, idle)
		}
	}
	if t.Bound == 0 || 2*t.Bound < len(windows) {
		return OneCore{}, false
	}
	t.average()
	return t, true
}

// boundBy is a window's busiest core and the idle share of the idlest
// other, when the one is at least OneCoreBusy busy and the other at least
// OneCoreIdle idle.
func boundBy(cores []results.CoreStat) (busy results.CoreStat, idle float64, ok bool) {
	busy = slices.MinFunc(cores, func(a, b results.CoreStat) int { return cmp.Compare(a.Idle, b.Idle) })
	for _, c := range cores {
		if c.CPU != busy.CPU {
			idle = max(idle, c.Idle)
		}
	}
	return busy, idle, 100-busy.Idle >= OneCoreBusy && idle >= OneCoreIdle
}
