package collect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// loggedKernel logs the CPU sampler's and the perf window's calls.
type loggedKernel struct {
	fakeKernel
	log *[]string
}

func (k *loggedKernel) CPU() engine.Sampler { return loggedSampler{k.log} }
func (k *loggedKernel) CPP([]netns.Iface, []string) (engine.MetricWindow, error) {
	return loggedWindow{k.log}, nil
}

type loggedSampler struct{ log *[]string }

func (s loggedSampler) Start() error { *s.log = append(*s.log, "+cpu"); return nil }
func (s loggedSampler) Stop() (metrics.Window, error) {
	*s.log = append(*s.log, "-cpu")
	return metrics.Window{}, nil
}

type loggedWindow struct{ log *[]string }

func (w loggedWindow) Start(context.Context) error { *w.log = append(*w.log, "+perf"); return nil }
func (w loggedWindow) Stop(context.Context) error  { *w.log = append(*w.log, "-perf"); return nil }
func (w loggedWindow) Metrics(context.Context) (map[string]float64, error) {
	*w.log = append(*w.log, "report")
	return map[string]float64{"cpp_total_ns": 7}, nil
}

// A cpp: true trial's perf report (seconds at 100% of a core on the
// server node) runs after the CPU sampler's window closed, on either
// engine (both go through engine.MetricWindow): the per-core CPU and
// softirq figures of the trial counted it when the report ran inside
// cpp's Stop, which came before the cpu collector's.
func TestSetReportAfterCPUWindow(t *testing.T) {
	var log []string
	k := &loggedKernel{log: &log}
	s, err := NewSet(study.Workload{CPP: true}, Trial{Cluster: fakeCluster{}, Kernel: func(engine.Node) engine.Kernel { return k },
		Servers: []engine.Pod{fakePod{}}, SharedKernel: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, " "); got != "+cpu +perf -perf -cpu report" {
		t.Errorf("calls %q, want perf's report after the CPU window closed", got)
	}
	if r.Metrics["cpp_total_ns"] != 7 || r.CPU == nil {
		t.Errorf("result %+v: want the report's metrics beside the CPU window", r)
	}
}

// fin is a fake collector with work after its window.
type fin struct {
	fake
	finishErr error
}

func (f *fin) Finish(context.Context) (Result, error) {
	*f.log = append(*f.log, "="+f.name)
	return Result{Metrics: map[string]float64{f.name + "_late": 1}}, f.finishErr
}

// Finish comes after every Stop, only for a collector whose Stop
// succeeded, and its error ranks by the collector's place in the list,
// as Stop's does.
func TestSetFinishAfterEveryStop(t *testing.T) {
	var log []string
	mk := func() (*Set, *fake, *fin) {
		a := &fake{name: "a", log: &log}
		b := &fin{fake: fake{name: "b", log: &log}}
		c := &fake{name: "c", log: &log}
		return &Set{names: []string{"a", "b", "c"}, cs: []Collector{a, b, c}, early: make([]bool, 3),
			started: make([]bool, 3), took: make([]time.Duration, 3)}, a, b
	}
	s, a, b := mk()
	_ = s.Start(context.Background())
	r, err := s.Stop(context.Background())
	if got := strings.Join(log, " "); got != "+a +b +c -c -b -a =b" || err != nil || r.Metrics["b_late"] != 1 || r.Metrics["b"] != 1 {
		t.Errorf("log %q, err %v, metrics %v", got, err, r.Metrics)
	}
	log = nil
	s, a, b = mk()
	b.finishErr = errors.New("b's report failed")
	_ = s.Start(context.Background())
	if _, err := s.Stop(context.Background()); err == nil || err.Error() != "b's report failed" {
		t.Errorf("finish error: %v", err)
	}
	log = nil
	s, a, b = mk()
	a.endErr, b.finishErr = errors.New("a failed"), errors.New("b's report failed")
	_ = s.Start(context.Background())
	if _, err := s.Stop(context.Background()); err == nil || err.Error() != "a failed" {
		t.Errorf("the first collector's error should win: %v", err)
	}
	log = nil
	s, _, b = mk()
	b.endErr = errors.New("b failed")
	_ = s.Start(context.Background())
	if _, err := s.Stop(context.Background()); err == nil || strings.Contains(strings.Join(log, " "), "=b") {
		t.Errorf("finished after a failed stop: log %q, err %v", log, err)
	}
}
