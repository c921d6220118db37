package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/collect"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// namedNode is an engine.Node that has only its name.
type namedNode struct {
	engine.Node
	name string
}

func (n namedNode) Name() string { return n.name }

// offPathSample is an impaired trial's sample: the workload's metric,
// the netem counters (absent when sent < 0) and the share of the
// measured window the collectors recorded (nil: all of it, a task's).
func offPathSample(impairment, metric string, rate, sent float64, window *float64) results.Sample {
	m := map[string]float64{metric: rate}
	if sent >= 0 {
		m[collect.MetricQdiscPackets], m[collect.MetricQdiscDrops], m[collect.MetricQdiscBytes] = sent, 0, 1448*sent
	}
	return results.Sample{Cell: results.Cell{Datapath: "calico", Workload: "tcp", Impairment: impairment},
		Metrics: m, Noise: &results.Noise{WindowPct: window}}
}

// An impaired trial whose netem counted nothing while the workload moved
// traffic measured an unimpaired path (a Calico CrossSubnet pool routes
// natively between nodes of one subnet and skips vxlan.calico): it
// fails, naming the device and node, why and what to do. Any packet
// through netem passes; so do an unimpaired cell, a window the
// collectors recorded only in part (the noise guard repeats it: late
// collectors read 0-124 packets) and a sample without the counters.
func TestOffPathFailsTheTrial(t *testing.T) {
	g := study.Noise{MaxStealPct: 10, MaxOutsidePct: 25}
	imp := engine.Impaired{Node: namedNode{name: "cnb-client"}, Devs: []netns.Iface{{Netns: "cnb-c", Name: "vxlan.calico"}}}
	pct := func(v float64) *float64 { return &v }
	err := offPath(offPathSample("delay-low", results.MetricBitrate, 9.4e8, 0, pct(100)), imp, g)
	if !errors.Is(err, errOffPath) || isFatal(err) {
		t.Fatalf("zero packets with traffic: %v (fatal %v), want errOffPath, a failed trial that is retried", err, isFatal(err))
	}
	for _, want := range []string{"impairment delay-low", "vxlan.calico of node cnb-client", "carried none of the trial's packets", "bitrate 9.4e+08",
		"Calico CrossSubnet, Flannel DirectRouting", "wrong side", "set spec.impairAt.where or .direction to a device the path crosses"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// Every workload that runs through impairments: sockperf and qperf
	// say transactions, ab requests.
	for _, m := range []string{results.MetricTransactions, results.MetricRequests} {
		if err := offPath(offPathSample("loss-low", m, 2e4, 0, nil), imp, g); !errors.Is(err, errOffPath) {
			t.Errorf("%s with zero packets: %v, want errOffPath", m, err)
		}
	}
	for _, c := range []struct {
		name string
		s    results.Sample
	}{
		{"one packet through netem", offPathSample("delay-low", results.MetricBitrate, 9.4e8, 1, pct(100))},
		{"unimpaired cell", offPathSample("", results.MetricBitrate, 9.4e8, 0, pct(100))},
		{"window recorded in part", offPathSample("delay-low", results.MetricBitrate, 9.4e8, 0, pct(35))},
		{"no qdisc counters", offPathSample("delay-low", results.MetricBitrate, 9.4e8, -1, pct(100))},
		{"no traffic", offPathSample("delay-low", results.MetricBitrate, 0, 0, pct(100))},
		{"a task", offPathSample("delay-low", "startup_ms", 900, 0, nil)},
	} {
		if err := offPath(c.s, imp, g); err != nil {
			t.Errorf("%s: %v, want the trial to pass", c.name, err)
		}
	}
	// Drops alone are packets through netem (a loss preset's).
	s := offPathSample("loss-high", results.MetricBitrate, 1e6, 0, pct(100))
	s.Metrics[collect.MetricQdiscDrops] = 3
	if err := offPath(s, imp, g); err != nil {
		t.Errorf("drops only: %v, want the trial to pass", err)
	}
	// At the window bound the window counts as whole (disturbed's rule).
	if err := offPath(offPathSample("delay-low", results.MetricBitrate, 9.4e8, 0, pct(80)), imp, g); !errors.Is(err, errOffPath) {
		t.Errorf("window of 80%%: %v, want errOffPath", err)
	}
}

// fakeCounters is a collector whose window reads what it is given: a
// CPU window (the runner needs one) and the netem counters.
type fakeCounters struct{ m map[string]float64 }

func (fakeCounters) Start(context.Context) error { return nil }
func (f fakeCounters) Stop(context.Context) (collect.Result, error) {
	return collect.Result{Metrics: f.m, CPU: &metrics.Window{Cores: []results.CoreStat{{CPU: 0}}}}, nil
}

// movingDriver is a workload that moved traffic at bitrate.
type movingDriver struct{ bitrate float64 }

func (movingDriver) Describe() spec.Tool { return spec.Tool{Name: "iperf3"} }
func (movingDriver) Check() error        { return nil }
func (d movingDriver) Run(_ context.Context, t workload.Trial) (workload.Result, error) {
	t.Started(time.Now())
	time.Sleep(t.Duration)
	return workload.Result{Metrics: map[string]float64{results.MetricBitrate: d.bitrate}}, nil
}

// An impaired trial whose netem counted nothing fails in r.trial, so
// runUnit records it as a failed attempt, retries it and gives the cell
// up with the error; its knobs are reverted all the same.
func TestTrialOffPathFails(t *testing.T) {
	savedK, savedC := knob.List, collect.List
	defer func() { knob.List, collect.List = savedK, savedC }()
	reverted := false
	knob.List = []knob.Entry{{Name: "impairment", Scope: knob.Trial, Wanted: func(*knob.Target) bool { return true },
		Apply: func(_ context.Context, t *knob.Target) (knob.Undo, error) {
			t.Impaired = engine.Impaired{Node: namedNode{name: "cnb-client"}, Devs: []netns.Iface{{Name: "flannel.1"}}, Netem: []impair.Spec{{Loss: 5, Limit: 1000}}}
			return func() error { reverted = true; return nil }, nil
		}}}
	try := func(sent float64) error {
		collect.List = []collect.Entry{{Name: "fake", Enabled: func(study.Workload) bool { return true },
			New: func(collect.Trial) (collect.Collector, error) {
				return fakeCounters{map[string]float64{collect.MetricQdiscPackets: sent, collect.MetricQdiscDrops: 0}}, nil
			}}}
		s := &study.Study{}
		// Long enough that collectors started late on a loaded machine
		// still record the 80% of the window that makes it whole (at
		// 20 ms, 4 ms late made it a partial window, which passes).
		s.Spec.Duration.Duration = 500 * time.Millisecond
		out, err := results.Create(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		r := &run{study: s, engine: stubEngine{}, out: out, plan: &plan{machine: cpuset.Set{0, 1},
			drivers: map[string]workload.Driver{"tcp": movingDriver{9.4e8}}}}
		_, err = r.trial(context.Background(), nil, results.Cell{Workload: "tcp", Impairment: "delay-low"}, 1,
			study.Tuning{}, study.Workload{Name: "tcp", Tool: "iperf3"}, placed{}, &knob.Target{})
		// What the trial installed is on record (env.json).
		if got := r.env.Impairments["delay-low"]; len(got) != 1 || got[0].Netem != "loss 5% limit 1000" || got[0].Devices[0] != "flannel.1" {
			t.Errorf("recorded %+v, want the trial's netem on flannel.1", got)
		}
		return err
	}
	if err := try(0); !errors.Is(err, errOffPath) || isFatal(err) || !reverted {
		t.Errorf("no packet through netem: %v (fatal %v, reverted %v), want errOffPath as a failed trial", err, isFatal(err), reverted)
	}
	if err := try(12); err != nil {
		t.Errorf("12 packets through netem: %v, want the trial counted", err)
	}
}
