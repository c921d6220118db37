package localengine

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/study"
)

// cppPreflight checks perf when a workload asks for CPP and chooses, once
// per run, the event every CPP trial samples: hardware cycles when this
// machine counts them, else cpu-clock (cpp.ChooseEvent). The choice and
// its reason become a note in env.json, so a reader knows whether the
// run's costs are cycles or ns and why. ok is false when no workload asks
// for CPP.
func cppPreflight(ctx context.Context, s *study.Study, run cpp.RunFunc) (ev cpp.Event, note string, err error) {
	for _, w := range s.Variants() {
		if w.CPP {
			if err := cpp.Check(); err != nil {
				return ev, "", fmt.Errorf("workload %s: %w", w.Name, err)
			}
			ev = cpp.ChooseEvent(ctx, run)
			note = fmt.Sprintf("CPU cost per packet samples perf event %s (metrics cpp_*_%s, %s/packet): %s",
				ev.Name, ev.Unit, ev.Unit, ev.Reason)
			return ev, note, nil
		}
	}
	return ev, "", nil
}

// cppWindow records the CPU cost per packet with perf on this machine.
type cppWindow struct{ rec *cpp.Recorder }

func (w cppWindow) Start(ctx context.Context) error { return w.rec.Start(ctx) }
func (w cppWindow) Stop(ctx context.Context) (map[string]float64, error) {
	res, err := w.rec.Stop(ctx)
	return res.Metrics, err
}
