package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/study"
)

// Pod start-up metrics (workload podstartup), spelled out as the other
// drivers' are.
const (
	mStartup    = "startup_ms"
	mStartupMax = "startup_max_ms"
	mPodSetup   = "setup_ms"
	mPodStart   = "pod_start_ms" // the kube engine's whole pods
	phasePrefix = "phase_"
	// stepsUnit tells the start-up breakdown's bars from the CPP bars.
	stepsUnit = "ms"
)

// phaseOrder is the order steps are stacked in: the namespace, the
// datapath's steps in the order they happen, the CNI plugin calls, then
// what no step covered; steps not listed go before "other", by name.
var phaseOrder = []string{"netns", "link", "port", "address", "routes", "cni_loopback"}

// startupFigure is one datapath's pod start-up against the pods started
// at once (seed 004's Fig. 15b for one CNI).
func startupFigure(d sweepData, name string) figure {
	title := "Pod network start-up vs pods started at once (" + name + ")"
	metrics := []string{mStartup, mStartupMax, mPodSetup, mPodStart}
	f := figure{Title: title, Caption: "Mean time from the burst's start until a pod's network was ready, until the last one was, " +
		"and a pod's own set-up (namespace and wiring, without waiting for a turn; on a cluster the whole pod's start, create to Ready); " +
		meanNote(d.rows(metrics...), metrics...) + "."}
	p := newPlot(title, "pods started at once", "ms")
	p.Y.Min = 0
	leg := newLegend()
	xOf := func(v study.Workload) (float64, bool) { return float64(v.Concurrent()), true }
	drawn := false
	for i, m := range []struct{ metric, label string }{
		{mStartup, "ready (mean)"}, {mStartupMax, "last ready"}, {mPodSetup, "own set-up"}, {mPodStart, "own start (whole pod)"},
	} {
		drawn = addLine(p, &leg, m.label, i, xyCI(d, xOf, m.metric, 1)) || drawn
	}
	if !drawn {
		f.Missing = "no data"
		return f
	}
	padY(p)
	return render(f, p, leg, figW, figH)
}

// stepsBarOf is the breakdown of a pod's set-up at the sweep's first
// variant (the fewest pods at once: seed 004 timed the steps launching
// one pod at a time).
func stepsBarOf(d sweepData) (stackBar, bool) {
	v := d.sw.Variants[0]
	tot, ok := d.row(v, mPodSetup)
	if !ok {
		// A cluster's whole pods: its steps sum to their start.
		tot, ok = d.row(v, mPodStart)
	}
	if !ok {
		return stackBar{}, false
	}
	b := stackBar{label: d.sw.Datapath, unit: stepsUnit, values: map[string]float64{}, total: tot.Mean, totalRow: tot}
	if len(d.sw.Variants) > 1 {
		b.label += " " + paramLabel(v)
	}
	cell := d.sw.Cell(v)
	for k, r := range d.idx {
		if k.Cell != cell || k.CPU != -1 || r.N == 0 || !strings.HasPrefix(k.Metric, phasePrefix) {
			continue
		}
		b.values[strings.TrimSuffix(strings.TrimPrefix(k.Metric, phasePrefix), "_ms")] = r.Mean
	}
	return b, len(b.values) > 0
}

// stepsFigures is the set-up-by-step figure of the start-up bars among
// bars (none without any).
func stepsFigures(bars []stackBar) []figure {
	var steps []stackBar
	for _, b := range bars {
		if b.unit == stepsUnit {
			steps = append(steps, b)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	return []figure{stepsFigure(steps)}
}

// stepsFigure stacks each datapath's set-up by step (seed 004's Fig.
// 15a).
func stepsFigure(bars []stackBar) figure {
	title := "Pod network set-up by step"
	f := figure{Title: title, Caption: "Mean time of each step of one pod's network set-up (the fewest pods at once): " +
		"the namespace, then the datapath's steps (link: veth or slave device, port: bridge/OVS port, proxy ARP or BPF endpoint, " +
		"address, routes) or, with wiring cni, each CNI plugin call; other is what no step covered. Bars stack to the measured set-up. " +
		"Seed 004's steps (link up, IP allocation, endpoint creation) are those of real CNI plugins and daemons. " + stackNote(bars)}
	var names []string
	for _, b := range bars {
		for n := range b.values {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(stepRank(a), stepRank(b)), strings.Compare(a, b)) })
	return stackedFigure(f, title, "ms / pod", bars, names, "other", func(n string) string { return strings.ReplaceAll(n, "_", " ") })
}

// stepRank places a step in phaseOrder; unlisted steps after the listed
// ones, "other" last.
func stepRank(name string) int {
	if name == "other" {
		return len(phaseOrder) + 2
	}
	if i := slices.Index(phaseOrder, name); i >= 0 {
		return i
	}
	return len(phaseOrder) + 1
}
