package runner

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/knob"
)

// The cells whose trials may take a few distinct values, held before a
// decision (adaptive.Hold).
//
// A knob that places each flow's receive work on a CPU by the flow's
// hash (knob.Entry.HashCPUs: RPS) places a trial's new connections
// anew every trial. With few flows on many CPUs, whether they share a
// CPU (or land on the one the reader runs on) is a coin toss per trial,
// and the cell's value follows it: run 5 of docs/statistics.md's
// benchmark had rps at 1 pair worse at its first look, n=3, where the
// fixed 20-trial design said undecided, its first three trials all on
// the slow side. Nothing in three such trials shows it, so the looks'
// error bound, which assumes roughly normal noise, does not hold: such
// a cell is held to adaptive.FewValuedTrials before any stop of its own.
// The rule is the knob's count of CPUs and the cell's count of flows,
// not a study's name: any study whose tuning spreads few flows by hash
// is held.

// holdOf is the hold of unit u (cellsOf, the one place that sets it):
// held when a trial knob of the cell spreads its flows over CPUs by hash
// and the flows are few for those CPUs (fewValued). It is known before
// the cell's pods exist, so every path that plans the cell (a block of
// one datapath, the blocks of several run side by side, a resumed run
// replaying a datapath it builds no cluster for) holds it alike: the
// CPUs are the run's steering CPUs, and the flows are the variant's
// measured pairs at the cell's replica count (measuredPairs, as place
// makes them) times each client's parallel streams.
func (r *run) holdOf(u unit) adaptive.Hold {
	d, _ := r.study.Datapath(u.cell.Datapath)
	kt := knob.Target{Study: r.study, Datapath: d, Tuning: u.tuning, Workload: u.work, Local: !r.plan.remote,
		SteerCPUs: r.plan.steerCPUs(), ClientSteerCPUs: r.plan.clientSteerCPUs()}
	cpus, _ := knob.HashSpread(knob.Trial, &kt)
	return fewValued(measuredPairs(u.work, u.cell.Replicas)*max(u.work.Parallel, 1), cpus)
}

// fewValued is the hold of a cell whose flows (measured pairs times
// each client's parallel streams) a knob spreads by hash over cpus
// CPUs: none when it spreads them over fewer than two (one CPU takes
// every flow, every trial) or when there are at least two flows per
// CPU, where a trial's flows cover the CPUs about evenly whatever their
// hashes; held to adaptive.FewValuedTrials otherwise. A user's larger
// trials.min still applies, and the hold never goes beyond trials.max
// (the controller sees to both).
func fewValued(flows, cpus int) adaptive.Hold {
	if cpus < 2 || flows >= 2*cpus {
		return adaptive.Hold{}
	}
	unit := "flows"
	if flows == 1 {
		unit = "flow"
	}
	return adaptive.Hold{Trials: adaptive.FewValuedTrials,
		Why: fmt.Sprintf("its steering places %d %s on %d CPUs per trial by hash, so its trials may take a few distinct values", flows, unit, cpus)}
}
