package collect

import (
	"context"
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

// fakeCounter returns its values in turn, one map per read.
type fakeCounter struct {
	reads []map[string]uint64
	err   error
}

func (f *fakeCounter) Counts() (map[string]uint64, error) {
	if f.err != nil {
		return nil, f.err
	}
	m := f.reads[0]
	f.reads = f.reads[1:]
	return m, nil
}

func TestBPFCollector(t *testing.T) {
	dp := &fakeCounter{reads: []map[string]uint64{
		{"cilium_lb_count": 10, "cilium_pass_count": 5},
		{"cilium_lb_count": 25, "cilium_pass_count": 5},
	}}
	lb := &fakeCounter{reads: []map[string]uint64{
		{"socklb_translated_count": 100, "socklb_reversed_count": 7},
		// reversed shrank: the program was reloaded, its growth unknown
		{"socklb_translated_count": 103, "socklb_reversed_count": 2, "socklb_nobackend_count": 1},
	}}
	r, err := window(t, bpfEntry, Trial{Counters: []engine.Counter{dp, lb}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"bpf_cilium_lb_count": 15, "bpf_cilium_pass_count": 0,
		"bpf_socklb_translated_count": 3, "bpf_socklb_nobackend_count": 1}
	if len(r.Metrics) != len(want) {
		t.Errorf("metrics %v, want %v", r.Metrics, want)
	}
	for k, v := range want {
		if got, ok := r.Metrics[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}

func TestBPFCollectorNoSourcesAndErrors(t *testing.T) {
	c, _ := bpfEntry.New(Trial{})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Stop(context.Background()); err != nil || len(r.Metrics) != 0 {
		t.Errorf("no counters on the path: %v, %v; want nothing", r.Metrics, err)
	}
	c, _ = bpfEntry.New(Trial{Counters: []engine.Counter{&fakeCounter{err: errors.New("map gone")}}})
	if err := c.Start(context.Background()); err == nil {
		t.Error("a counter that cannot be read: no error")
	}
	if !bpfEntry.Enabled(study.Workload{Counters: true}) || bpfEntry.Enabled(study.Workload{}) {
		t.Error("the bpf collector must follow the workload's counters switch")
	}
}
