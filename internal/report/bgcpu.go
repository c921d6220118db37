package report

import (
	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/study"
)

// backgroundCPUFigure draws the nodes' CPU against the background
// connections (seed 004's Fig. 13c, which explains the measured flow's
// drop past 400 connections by CPU overload) where the nodes collector
// measured it; ok is false where it did not (a run from before it was
// on for background sweeps).
func backgroundCPUFigure(d sweepData, name string) (f figure, ok bool) {
	title := "Node CPU vs background connections (" + name + ")"
	metrics := []string{collect.MetricNodeCPUClient, collect.MetricNodeCPUServer}
	f = figure{Title: title, Caption: "CPU % of each node over the measured window (100 - idle - iowait, mean over its CPUs), " +
		meanNote(d.rows(metrics...), metrics...) + ". Nodes on one kernel (the local engine's emulated nodes) share the machine: its CPU is recorded once, as the client node's."}
	p := newPlot(title, "background connections", "CPU %")
	p.Y.Min = 0
	leg := newLegend()
	xOf := func(v study.Workload) (float64, bool) { return float64(v.BackgroundConnections()), true }
	for i, m := range []struct{ metric, label string }{
		{collect.MetricNodeCPUClient, "client node"},
		{collect.MetricNodeCPUServer, "server node"},
	} {
		ok = addLine(p, &leg, m.label, i, xyCI(d, xOf, m.metric, 1)) || ok
	}
	if !ok {
		return f, false
	}
	padY(p)
	return render(f, p, leg, figW, figH), true
}
