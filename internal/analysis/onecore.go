package analysis

import (
	"cmp"
	"slices"

	"github.com/cnibench/cnibench/internal/results"
)

// A cell is bound by one core when, over its trials' measured windows,
// one core of a node was busy at least OneCoreBusy percent of the time
// while another was idle at least OneCoreIdle percent: its number is what
// one core could do, not what the node could. On one machine it is the
// rule rather than the exception: a veth pair has a single receive queue,
// so a flow's packet work runs in softirq on the core that sent it (at high
// load often the receiver's, whose ACKs clock the sender's segments out),
// and the scheduler wakes the receiving process on that core too.
const (
	OneCoreBusy = 95.0
	OneCoreIdle = 50.0
)

// OneCore is a cell bound by one core of one node.
type OneCore struct {
	Cell results.Cell `json:"cell"`
	// Node is "server" (core_* rows; on emulated nodes the machine's
	// cores) or "client" (client_core_*, a node with its own kernel).
	Node string `json:"node"`
	// CPU is the busy core; BusyPct its mean busy share (100 - idle) and
	// SoftIRQPct the softirq share of its time, nil when not recorded.
	CPU        int      `json:"cpu"`
	BusyPct    float64  `json:"busy_pct"`
	SoftIRQPct *float64 `json:"softirq_pct,omitempty"`
	// IdleCPUs are the cores at least OneCoreIdle idle, IdlePct the
	// idlest one's mean idle share.
	IdleCPUs []int   `json:"idle_cpus"`
	IdlePct  float64 `json:"idle_pct"`
	// N is the trials the busy core's mean is over.
	N int `json:"n"`
}

// OneCoreCells lists the cells bound by one core, in the rows' order,
// from the mean per-core idle and softirq shares of each cell (rows of
// CPU >= 0). A node with a single sampled core is never listed: there is
// no other core to have idled.
func OneCoreCells(rows []Row) []OneCore {
	type node struct {
		cell   results.Cell
		client bool
	}
	idle := map[node][]Row{}
	softirq := map[node]map[int]float64{}
	var order []node
	for _, r := range rows {
		if r.CPU < 0 || r.N == 0 {
			continue
		}
		base, client := CoreBase(r.Metric)
		k := node{r.Cell, client}
		switch base {
		case results.MetricCoreIdle:
			if idle[k] == nil {
				order = append(order, k)
			}
			idle[k] = append(idle[k], r)
		case results.MetricCoreSoftIRQ:
			if softirq[k] == nil {
				softirq[k] = map[int]float64{}
			}
			softirq[k][r.CPU] = r.Mean
		}
	}
	var out []OneCore
	for _, k := range order {
		cores := idle[k]
		if len(cores) < 2 {
			continue
		}
		busy := slices.MinFunc(cores, func(a, b Row) int { return cmp.Compare(a.Mean, b.Mean) })
		if 100-busy.Mean < OneCoreBusy {
			continue
		}
		oc := OneCore{Cell: k.cell, Node: "server", CPU: busy.CPU, BusyPct: 100 - busy.Mean, N: busy.N}
		if k.client {
			oc.Node = "client"
		}
		if v, ok := softirq[k][busy.CPU]; ok {
			oc.SoftIRQPct = &v
		}
		for _, r := range cores {
			if r.CPU != busy.CPU && r.Mean >= OneCoreIdle {
				oc.IdleCPUs = append(oc.IdleCPUs, r.CPU)
				oc.IdlePct = max(oc.IdlePct, r.Mean)
			}
		}
		if len(oc.IdleCPUs) > 0 {
			slices.Sort(oc.IdleCPUs)
			out = append(out, oc)
		}
	}
	return out
}
