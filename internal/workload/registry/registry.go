// Package registry is the one list of workload drivers the binary knows.
// Adding a tool is one driver package (with its Describe) and one line in
// Drivers; study validation (through internal/app's study.Catalog),
// doctor, env.json's tool versions, the kube image's tool list and the
// report's headline metrics read the drivers' descriptions from here.
package registry

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/ab"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/podstartup"
	"github.com/cnibench/cnibench/internal/workload/qperf"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
	"github.com/cnibench/cnibench/internal/workload/spec"

	"github.com/cnibench/cnibench/internal/suggest"
)

// Drivers returns every workload driver, freshly built.
func Drivers() []workload.Driver {
	return []workload.Driver{
		iperf3.New(),
		sockperf.New(),
		qperf.New(),
		ab.New(),
		podstartup.New(),
	}
}

// Lookup returns the driver of tool; the error wraps
// workload.ErrUnknownTool and lists the known tools.
func Lookup(tool string) (workload.Driver, error) {
	var known []string
	for _, d := range Drivers() {
		if d.Describe().Name == tool {
			return d, nil
		}
		known = append(known, d.Describe().Name)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("%w %q (%sknown: %s)", workload.ErrUnknownTool, tool, suggest.Hint(tool, known), strings.Join(known, ", "))
}

// Tools returns every driver's description, in registry order: what
// study.Catalog.Tools wants for validating study files.
func Tools() []spec.Tool {
	var out []spec.Tool
	for _, d := range Drivers() {
		out = append(out, d.Describe())
	}
	return out
}

// Describe returns the description of tool.
func Describe(tool string) (spec.Tool, bool) {
	for _, t := range Tools() {
		if t.Name == tool {
			return t, true
		}
	}
	return spec.Tool{}, false
}

// Programs lists, each once and in order, the programs a workload runs:
// its tool's, then those of the options it sets (taskset for pin, perf
// for cpp). An unknown tool has none.
func Programs(w study.Workload) []spec.Program {
	t, ok := Describe(w.Tool)
	if !ok {
		return nil
	}
	progs := slices.Clone(t.Programs)
	for _, name := range w.SetOptions() {
		if o, ok := t.Option(name); ok {
			progs = append(progs, o.Programs...)
		}
	}
	return uniq(progs)
}

// StudyPrograms lists the programs any workload of the study runs, each
// once, in study order.
func StudyPrograms(s *study.Study) []spec.Program {
	var progs []spec.Program
	for _, w := range s.Variants() {
		progs = append(progs, Programs(w)...)
	}
	return uniq(progs)
}

// AllPrograms lists every program any tool or option may run, each once,
// in registry order: what the kube engine's image carries.
func AllPrograms() []spec.Program {
	var progs []spec.Program
	for _, t := range Tools() {
		progs = append(progs, t.Programs...)
		for _, o := range t.Options {
			progs = append(progs, o.Programs...)
		}
	}
	return uniq(progs)
}

// KubePrograms is AllPrograms without the tools the kube engine does
// not run (spec.KubeNone): what `cnibench kube image` and the Dockerfile
// put in the image, so building it does not need a tool no kube run
// execs.
func KubePrograms() []spec.Program {
	var progs []spec.Program
	for _, t := range Tools() {
		if t.Kube.Support == spec.KubeNone {
			continue
		}
		progs = append(progs, t.Programs...)
		for _, o := range t.Options {
			progs = append(progs, o.Programs...)
		}
	}
	return uniq(progs)
}

func uniq(progs []spec.Program) []spec.Program {
	var out []spec.Program
	for _, p := range progs {
		if !slices.ContainsFunc(out, func(q spec.Program) bool { return q.Name == p.Name }) {
			out = append(out, p)
		}
	}
	return out
}

// Headline lists every tool's headline metrics, each once, tools in
// registry order.
func Headline() []string {
	var out []string
	for _, t := range Tools() {
		for _, m := range t.Headline {
			if !slices.Contains(out, m.Name) {
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// DecidedMetric is the metric a workload's cells are judged on: the one
// the study's precision target p names, else its tool's first headline
// metric for its protocol (bitrate for iperf3, startup_ms for
// podstartup), or bitrate for a tool this build does not know. The
// runner stops cells on it, the analysis decides its rows and an A/B
// proof reads them, so all three take it from here.
func DecidedMetric(p *study.Precision, w study.Workload) string {
	if p != nil && p.Metric != "" {
		return p.Metric
	}
	if t, ok := Describe(w.Tool); ok {
		if h := t.HeadlineFor(w.Protocol); len(h) > 0 {
			return h[0]
		}
	}
	return results.MetricBitrate
}

// KubeUnsupported says, one reason per problem, what of a workload the
// kube engine cannot run (its tool's spec.Kube); nil when it all runs.
// Every tool listed today runs there whole; the check stays for one that
// would not.
func KubeUnsupported(w study.Workload) []string {
	t, ok := Describe(w.Tool)
	if !ok {
		return nil
	}
	return kubeUnsupported(t, w)
}

func kubeUnsupported(t spec.Tool, w study.Workload) []string {
	if t.Kube.Support == spec.KubeNone {
		return []string{"tool " + t.Name + " does not run on a cluster"}
	}
	var out []string
	for _, name := range w.SetOptions() {
		o, _ := t.Option(name) // a sweep's name gives its option
		if why, ok := t.Kube.Unsupported[o.Name]; ok {
			out = append(out, why)
		}
	}
	return out
}
