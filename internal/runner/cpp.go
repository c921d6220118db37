package runner

import (
	"context"
	"fmt"

	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// cppWindow samples the CPU cost per packet over the same measured window
// as the CPU metrics: it wraps the node's sampler, starting perf right
// after it and stopping perf right before it. The recorder runs perf on
// this machine (local engine) or in the node's agent (kube).
type cppWindow struct {
	inner cpuSampler
	rec   cppRecorder
	res   cpp.Result
	err   error
}

func newCPPWindow(inner cpuSampler, rd nodeReader, ev cpp.Event, ifaces []netns.Iface) (*cppWindow, error) {
	rec, err := rd.cpp(ev, ifaces)
	if err != nil {
		return nil, err
	}
	return &cppWindow{inner: inner, rec: rec}, nil
}

func (c *cppWindow) Start() error {
	if err := c.inner.Start(); err != nil {
		return err
	}
	if err := c.rec.Start(context.Background()); err != nil {
		_, _ = c.inner.Stop()
		return fmt.Errorf("cpu cost per packet: %w", err)
	}
	return nil
}

func (c *cppWindow) Stop() (metrics.Window, error) {
	c.res, c.err = c.rec.Stop(context.Background())
	w, err := c.inner.Stop()
	if err != nil {
		return w, err
	}
	if c.err != nil {
		return w, fmt.Errorf("cpu cost per packet: %w", c.err)
	}
	return w, nil
}

// cppPreflight checks perf when a workload asks for CPP and chooses, once
// per run, the event every CPP trial samples: hardware cycles when this
// machine counts them, else cpu-clock (cpp.ChooseEvent). The choice and
// its reason become a note in env.json, so a reader knows whether the
// run's costs are cycles or ns and why.
func cppPreflight(ctx context.Context, s *study.Study, p *plan, run cpp.RunFunc) error {
	for _, w := range s.Variants() {
		if w.CPP {
			if err := cpp.Check(); err != nil {
				return fmt.Errorf("workload %s: %w", w.Name, err)
			}
			p.cppEvent = cpp.ChooseEvent(ctx, run)
			p.notes = append(p.notes, fmt.Sprintf("CPU cost per packet samples perf event %s (metrics cpp_*_%s, %s/packet): %s",
				p.cppEvent.Name, p.cppEvent.Unit, p.cppEvent.Unit, p.cppEvent.Reason))
			return nil
		}
	}
	return nil
}
