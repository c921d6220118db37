package localengine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/study"
)

// cppPreflight checks perf (check: cpp.Check) when a workload asks for
// CPP and chooses, once per run, the event every CPP trial samples:
// hardware cycles when this machine counts them, else cpu-clock
// (cpp.ChooseEvent). The choice and its reason become a note in
// env.json, so a reader knows whether the run's costs are cycles or ns
// and why. note is "" when no workload asks for CPP. A machine without
// perf is refused at the first such workload's cpp field, with the --set
// that runs the study without CPP: the CPP workloads are a study's, so
// the user who did not write it would otherwise have to find the field
// and the syntax in the docs.
func cppPreflight(ctx context.Context, s *study.Study, check func() error, run cpp.RunFunc) (ev cpp.Event, note string, err error) {
	first := slices.IndexFunc(s.Spec.Workloads, func(w study.Workload) bool { return w.CPP })
	if first < 0 {
		return ev, "", nil
	}
	if err := check(); err != nil {
		need := engine.Need{What: "workload " + s.Spec.Workloads[first].Name,
			Field: fmt.Sprintf("spec.workloads[%d].cpp", first), Without: withoutCPP(s)}
		return ev, "", need.Refusal("", err)
	}
	ev = cpp.ChooseEvent(ctx, run)
	note = fmt.Sprintf("CPU cost per packet samples perf event %s (metrics cpp_*_%s, %s/packet): %s",
		ev.Name, ev.Unit, ev.Unit, ev.Reason)
	return ev, note, nil
}

// withoutCPP is the --set that turns CPP off in every workload asking
// for it (each then runs as its plain bulk TCP, without perf).
func withoutCPP(s *study.Study) string {
	var sets []string
	for _, w := range s.Spec.Workloads {
		if w.CPP {
			sets = append(sets, "--set workloads."+w.Name+".cpp=false")
		}
	}
	return strings.Join(sets, " ")
}

// cppWindow records the CPU cost per packet with perf on this machine.
type cppWindow struct{ rec *cpp.Recorder }

func (w cppWindow) Start(ctx context.Context) error { return w.rec.Start(ctx) }
func (w cppWindow) Stop(ctx context.Context) error  { return w.rec.Stop(ctx) }
func (w cppWindow) Metrics(ctx context.Context) (map[string]float64, error) {
	res, err := w.rec.Report(ctx)
	return res.Metrics, err
}
