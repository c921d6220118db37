package analysis

import (
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// twoCores is a trial's cores: cpu 0 and 1 with the given idle shares,
// the busier one with softirq.
func twoCores(idle0, idle1, softirq float64) []results.CoreStat {
	return []results.CoreStat{
		{CPU: 0, CPUPercent: results.CPUPercent{Idle: idle0, SoftIRQ: softirq}},
		{CPU: 1, CPUPercent: results.CPUPercent{Idle: idle1, SoftIRQ: softirq}},
	}
}

// Trials are judged one by one: a cell whose busy core changes between
// trials is bound by one core in each, though the mean of each core over
// the trials reads as two half-busy cores. A cell is listed when at least
// half of its trials are bound; both cores busy (the machine's limit),
// 94% busy, a single core, or one bound trial of three are not listed.
func TestOneCoreCells(t *testing.T) {
	cell := func(wl string) results.Cell {
		return results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: wl, Replicas: 1}
	}
	var samples []results.Sample
	add := func(wl string, cores, client []results.CoreStat) {
		samples = append(samples, results.Sample{Cell: cell(wl), Cores: cores, ClientCores: client})
	}
	add("http@c8", twoCores(0.5, 88, 70), nil)
	add("http@c8", twoCores(90, 1.5, 74), nil) // the other core this time
	add("tcp", twoCores(2, 3, 40), twoCores(1, 60, 20))
	add("single", []results.CoreStat{{CPU: 0}}, nil)
	add("almost", twoCores(6, 90, 50), nil)
	add("once", twoCores(0, 90, 50), nil)
	add("once", twoCores(40, 45, 30), nil)
	add("once", twoCores(30, 50, 30), nil)
	got := OneCoreCells(samples)
	if len(got) != 2 {
		t.Fatalf("%d cells, want http@c8 on the server and tcp on the client: %+v", len(got), got)
	}
	h := got[0]
	if h.Cell.Workload != "http@c8" || h.Node != "server" || h.Bound != 2 || h.N != 2 || !slices.Equal(h.BusyCPUs, []int{0, 1}) ||
		h.BusyPct != 99 || h.SoftIRQPct != 72 || h.IdlePct != 89 {
		t.Errorf("http@c8: %+v", h)
	}
	if c := got[1]; c.Cell.Workload != "tcp" || c.Node != "client" || !slices.Equal(c.BusyCPUs, []int{0}) || c.IdlePct != 60 {
		t.Errorf("the client node's cell: %+v", c)
	}
}
