package analysis

import (
	"math"
	"slices"
	"testing"
	"time"

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
	got := OneCoreCells(samples, nil, nil)
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

// The tally keeps every cell and node with two or more sampled cores,
// bound or not, with how many of its trials were: what a comparison of
// two runs needs to say "bound in A, 0 of 3 in B".
func TestOneCoreTally(t *testing.T) {
	cell := results.Cell{Datapath: "flannel", Tuning: "rps", Workload: "http@c8", Replicas: 1}
	samples := []results.Sample{
		{Cell: cell, Cores: twoCores(40, 45, 30)},
		{Cell: cell, Cores: twoCores(0, 90, 50)},
		{Cell: cell, Cores: twoCores(50, 50, 10)},
		{Cell: results.Cell{Workload: "one"}, Cores: []results.CoreStat{{CPU: 0}}},
	}
	got := OneCoreTally(samples, nil, nil)
	if len(got) != 1 || got[0].Bound != 1 || got[0].N != 3 || got[0].Listed() || got[0].BusyPct != 100 {
		t.Fatalf("tally %+v, want the http@c8 cell, 1 of 3 bound, not listed", got)
	}
	if len(OneCoreCells(samples, nil, nil)) != 0 {
		t.Error("a cell with 1 of 3 trials bound is listed")
	}
}

// Within a trial the busy core can move (HTTP on flannel, 2026-11-29:
// cpu 0 at 100% for three seconds, then cpu 1): the trial's means read
// as two half-busy cores, its seconds as one core bound. A trial is bound
// when at least half its seconds are; seconds where the load moved
// mid-second (60% and 52%) are not. A trial without points falls back to
// its means.
func TestOneCoreSecondBySecond(t *testing.T) {
	cell := results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "http@c8", Replicas: 1}
	t0 := time.Date(2026, 11, 29, 13, 4, 16, 0, time.UTC)
	var points []results.CPUPoint
	second := func(trial, i int, busy0, busy1 float64) {
		for cpu, busy := range []float64{busy0, busy1} {
			points = append(points, results.CPUPoint{Cell: cell, Trial: trial, Time: t0.Add(time.Duration(10*trial+i) * time.Second),
				CPU: cpu, CPUPercent: results.CPUPercent{Idle: 100 - busy, SoftIRQ: busy * 0.7}})
		}
	}
	for i, b := range [][2]float64{{100, 13}, {100, 15}, {100, 14}, {54, 60}, {12, 100}, {12, 100}, {17, 100}} {
		second(1, i, b[0], b[1])
	}
	for i, b := range [][2]float64{{30, 82}, {31, 81}, {60, 52}, {100, 14}} { // 1 of 4 bound
		second(2, i, b[0], b[1])
	}
	means := twoCores(52, 48, 40) // what trial 1's means read
	samples := []results.Sample{{Cell: cell, Trial: 1, Cores: means}, {Cell: cell, Trial: 2, Cores: means}, {Cell: cell, Trial: 3, Cores: twoCores(1, 88, 70)}}
	if got := OneCoreTally(samples, nil, nil); len(got) != 1 || got[0].Bound != 1 || got[0].Listed() {
		t.Fatalf("by the means only trial 3 is bound: %+v", got)
	}
	got := OneCoreTally(samples, points, nil)
	if len(got) != 1 {
		t.Fatalf("tally %+v", got)
	}
	oc := got[0]
	if oc.Bound != 2 || oc.N != 3 || !oc.Listed() || !slices.Equal(oc.BusyCPUs, []int{0, 1}) {
		t.Errorf("trials 1 (by its seconds) and 3 (by its means) bound, cpus 0 and 1: %+v", oc)
	}
	// Trial 1's six bound seconds: 100% busy, the other core 517/6% idle
	// on average; trial 3's means: 99%, 88%.
	if oc.BusyPct != 99.5 || math.Abs(oc.IdlePct-(517.0/6+88)/2) > 1e-9 {
		t.Errorf("busy %v, idle %v", oc.BusyPct, oc.IdlePct)
	}
}

// cnibench in a container limited to CPUs 0-1 of an 8-CPU host: both of
// its cores busy is the run's limit, not one core's, though CPUs 2-7
// (sampled: /proc/stat lists them) idled. Judged over the run's CPUs
// (Env.MachineCPUs), per second and over the trial's means, the cell is
// not bound; with one of its two busy and the other idle it is. A run
// that did not record them is judged over every core, as before.
func TestOneCoreWithinMachine(t *testing.T) {
	cores := func(idle0, idle1 float64) []results.CoreStat {
		out := twoCores(idle0, idle1, 30)
		for c := 2; c < 8; c++ {
			out = append(out, results.CoreStat{CPU: c, CPUPercent: results.CPUPercent{Idle: 99}})
		}
		return out
	}
	cell := results.Cell{Datapath: "flannel", Tuning: "baseline", Workload: "tcp", Replicas: 1}
	samples := []results.Sample{{Cell: cell, Trial: 0, Cores: cores(1, 2)}, {Cell: cell, Trial: 1, Cores: cores(1, 2)}}
	t0 := time.Unix(1000, 0)
	var points []results.CPUPoint
	for _, c := range cores(1, 2) {
		points = append(points, results.CPUPoint{Time: t0, Cell: cell, Trial: 1, CPU: c.CPU, CPUPercent: c.CPUPercent})
	}
	machine := []int{0, 1}
	if got := OneCoreCells(samples, points, machine); len(got) != 0 {
		t.Errorf("both of the run's cores busy listed as one core's: %+v", got)
	}
	if got := OneCoreTally(samples, points, machine); len(got) != 1 || got[0].Bound != 0 || got[0].N != 2 {
		t.Errorf("tally over the run's CPUs: %+v, want 0 of 2 bound", got)
	}
	if got := OneCoreCells(samples, points, nil); len(got) != 1 {
		t.Errorf("without the run's CPUs: %+v, want the cell listed over every core", got)
	}
	samples = []results.Sample{{Cell: cell, Cores: cores(1, 80)}}
	if got := OneCoreCells(samples, nil, machine); len(got) != 1 || got[0].IdlePct != 80 {
		t.Errorf("one of the run's cores busy, the other 80%% idle: %+v, want listed with the other 80%% idle", got)
	}
}
