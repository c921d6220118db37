package analysis

import (
	"cmp"
	"slices"

	"github.com/cnibench/cnibench/internal/results"
)

// A trial is bound by one core when, over its measured window, one core
// of a node was busy at least OneCoreBusy percent of the time while
// another was idle at least OneCoreIdle percent: its number is what one
// core could do, not what the node could. On one machine it is the rule
// rather than the exception: a veth pair has a single receive queue, so a
// flow's packet work runs in softirq on the core that sent it (at high
// load often the receiver's, whose ACKs clock the sender's segments out),
// and the scheduler wakes the receiving process on that core too. Which
// core that is may change from trial to trial, so trials are judged one
// by one: the mean of each core over the trials would read as two half
// busy cores.
const (
	OneCoreBusy = 95.0
	OneCoreIdle = 50.0
)

// OneCore is a cell at least half of whose trials were bound by one core
// of a node.
type OneCore struct {
	Cell results.Cell `json:"cell"`
	// Node is "server" (Sample.Cores; on emulated nodes the machine's
	// cores) or "client" (Sample.ClientCores, a node with its own kernel).
	Node string `json:"node"`
	// Bound of the cell's N trials were bound by one core.
	Bound int `json:"bound_trials"`
	N     int `json:"n"`
	// BusyCPUs are the cores that were the busy one in those trials;
	// BusyPct is the busy core's mean busy share (100 - idle) over them,
	// SoftIRQPct the mean share of its time in softirq, and IdlePct the
	// mean idle share of the idlest other core.
	BusyCPUs   []int   `json:"busy_cpus"`
	BusyPct    float64 `json:"busy_pct"`
	SoftIRQPct float64 `json:"softirq_pct"`
	IdlePct    float64 `json:"idle_pct"`
}

// OneCoreCells lists the cells at least half of whose trials were bound
// by one core, in the order the cells' first samples come, the server
// node's before the client node's for a cell. A node with a single sampled
// core is never listed: there is no other core to have idled.
func OneCoreCells(samples []results.Sample) []OneCore {
	type key struct {
		cell   results.Cell
		client bool
	}
	acc := map[key]*OneCore{}
	var order []key
	for _, s := range samples {
		for _, client := range []bool{false, true} {
			cores := s.Cores
			if client {
				cores = s.ClientCores
			}
			if len(cores) < 2 {
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
			busy, idle, ok := boundBy(cores)
			if !ok {
				continue
			}
			oc.Bound++
			if !slices.Contains(oc.BusyCPUs, busy.CPU) {
				oc.BusyCPUs = append(oc.BusyCPUs, busy.CPU)
			}
			oc.BusyPct += 100 - busy.Idle
			oc.SoftIRQPct += busy.SoftIRQ
			oc.IdlePct += idle
		}
	}
	var out []OneCore
	for _, k := range order {
		oc := acc[k]
		if oc.Bound == 0 || 2*oc.Bound < oc.N {
			continue
		}
		n := float64(oc.Bound)
		oc.BusyPct, oc.SoftIRQPct, oc.IdlePct = oc.BusyPct/n, oc.SoftIRQPct/n, oc.IdlePct/n
		slices.Sort(oc.BusyCPUs)
		out = append(out, *oc)
	}
	return out
}

// boundBy is a trial's busiest core and the idle share of the idlest
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
