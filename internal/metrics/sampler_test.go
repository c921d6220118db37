package metrics

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// TestSamplerLiveProc samples this machine's real /proc for two seconds
// (no root needed) and checks that the numbers are plausible.
func TestSamplerLiveProc(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for 2 s")
	}
	s := NewSampler("", 0)
	if err := s.Start(); err != nil {
		// Only a machine without /proc/stat lacks what the sampler reads.
		if _, serr := os.Stat("/proc/stat"); serr != nil {
			t.Skipf("skipped: no /proc/stat: %v", serr)
		}
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	w, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// A point per 1 s tick, and the final reading's when its interval
	// (at most what the window lasted past its last whole second) is
	// half a second or more: a loaded machine oversleeps the 2.1 s.
	d := w.End.Sub(w.Start)
	if d < 2*time.Second || d > 10*time.Second {
		t.Errorf("window lasted %v", d)
	}
	secs := int(d / time.Second)
	if n := len(w.Points); n != secs && (n != secs+1 || d-time.Duration(secs)*time.Second < time.Second/2) {
		t.Errorf("%d points in %v at 1 s, want %d (or %d with a final interval of 0.5 s or more)", n, d, secs, secs+1)
	}
	if len(w.Cores) == 0 {
		t.Fatal("no cores")
	}
	for _, p := range w.Points {
		if len(p.Cores) == 0 {
			t.Errorf("point at %v has no cores", p.Time)
		}
		for _, c := range p.Cores {
			checkPlausible(t, "point", c.CPU, c.CPUPercent)
		}
	}
	for _, c := range w.Cores {
		checkPlausible(t, "window", c.CPU, c.CPUPercent)
		for _, r := range []float64{c.NetRxPerSec, c.ProcessedPerSec, c.DroppedPerSec, c.SqueezedPerSec, c.ReceivedRPSPerSec} {
			if r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
				t.Errorf("cpu%d: bad rate in %+v", c.CPU, c)
			}
		}
	}
	// The scheduler tick raises TIMER, not NET_RX, so an idle machine may
	// have no busiest core; if there is one it must be a listed core.
	if b := BusiestNetRxCPU(w.Cores); b != -1 && !hasCPU(w.Cores, b) {
		t.Errorf("BusiestNetRxCPU = %d, not a listed core", b)
	}
}

// checkPlausible fails unless p is a split of 100% with idle in 0..100.
// Guest time (counted in no field) and counters going backwards would
// break the sum; neither happens on a test machine that runs no VMs.
func checkPlausible(t *testing.T, what string, cpu int, p results.CPUPercent) {
	t.Helper()
	sum := p.User + p.Nice + p.System + p.IOWait + p.IRQ + p.SoftIRQ + p.Steal + p.Idle
	if math.Abs(sum-100) > 0.5 {
		t.Errorf("%s cpu%d: fields sum to %.3f: %+v", what, cpu, sum, p)
	}
	if p.Idle < 0 || p.Idle > 100 {
		t.Errorf("%s cpu%d: idle %.3f", what, cpu, p.Idle)
	}
}

func hasCPU(cores []results.CoreStat, cpu int) bool {
	for _, c := range cores {
		if c.CPU == cpu {
			return true
		}
	}
	return false
}

func TestSamplerLifecycle(t *testing.T) {
	root := t.TempDir()
	useCapture(t, root, "fc-2cpu-6.18-t0")
	s := NewSampler(root, time.Hour)
	if _, err := s.Stop(); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("Stop before Start: err = %v", err)
	}
	for range 2 { // a Sampler can be reused
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err == nil || !strings.Contains(err.Error(), "already running") {
			t.Errorf("second Start: err = %v", err)
		}
		w, err := s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		// The files did not change: a zero interval, no short point.
		if len(w.Cores) != 2 || len(w.Points) != 0 || w.Cores[0].Idle != 100 {
			t.Errorf("window = %+v", w)
		}
	}
	if err := NewSampler(t.TempDir(), 0).Start(); err == nil || !strings.Contains(err.Error(), "start sampler") {
		t.Errorf("Start without files: err = %v", err)
	}
}

// A reading that fails mid-window is reported by Stop with the window.
func TestSamplerFailedReading(t *testing.T) {
	root := t.TempDir()
	useCapture(t, root, "fc-2cpu-6.18-t0")
	s := NewSampler(root, 10*time.Millisecond)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "stat", "garbage\n")
	time.Sleep(50 * time.Millisecond)
	useCapture(t, root, "fc-2cpu-6.18-t1")
	w, err := s.Stop()
	if err == nil || !strings.Contains(err.Error(), "sample at") || !strings.Contains(err.Error(), "no aggregate cpu line") {
		t.Errorf("err = %v", err)
	}
	if len(w.Cores) != 2 || w.Cores[1].NetRxPerSec <= 0 {
		t.Errorf("window = %+v", w)
	}
}

func TestCPUPoints(t *testing.T) {
	t1 := t0.Add(time.Second)
	w := Window{Points: []PerSecond{
		{Time: t0, Cores: []CorePercent{{0, results.CPUPercent{Idle: 100}}, {1, results.CPUPercent{User: 100}}}},
		{Time: t1, Cores: []CorePercent{{1, results.CPUPercent{SoftIRQ: 100}}}},
	}}
	cell := results.Cell{Datapath: "veth", Tuning: "rps", Workload: "tcp", Replicas: 2}
	got := w.CPUPoints(cell, 3)
	want := []results.CPUPoint{
		{Cell: cell, Trial: 3, Time: t0, CPU: 0, CPUPercent: results.CPUPercent{Idle: 100}},
		{Cell: cell, Trial: 3, Time: t0, CPU: 1, CPUPercent: results.CPUPercent{User: 100}},
		{Cell: cell, Trial: 3, Time: t1, CPU: 1, CPUPercent: results.CPUPercent{SoftIRQ: 100}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBusiestNetRxCPU(t *testing.T) {
	core := func(cpu int, rate float64) results.CoreStat { return results.CoreStat{CPU: cpu, NetRxPerSec: rate} }
	tests := []struct {
		name  string
		cores []results.CoreStat
		want  int
	}{
		{"none", nil, -1},
		{"all idle", []results.CoreStat{core(0, 0), core(1, 0)}, -1},
		{"one", []results.CoreStat{core(0, 3), core(1, 9000), core(2, 12)}, 1},
		{"tie goes to lowest", []results.CoreStat{core(5, 7), core(2, 7), core(3, 1)}, 2},
		{"sparse numbers", []results.CoreStat{core(4, 1), core(17, 2)}, 17},
	}
	for _, tt := range tests {
		if got := BusiestNetRxCPU(tt.cores); got != tt.want {
			t.Errorf("%s: BusiestNetRxCPU = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// BenchmarkSample measures one background reading of the real /proc: the
// harness's cost per core per interval.
func BenchmarkSample(b *testing.B) {
	rec := newRecorder(DefaultProcRoot, time.Second)
	if err := rec.begin(time.Now()); err != nil {
		b.Skipf("no usable /proc: %v", err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := rec.sample(time.Now(), false); err != nil {
			b.Fatal(err)
		}
		if i%3600 == 3599 { // keep the points of at most an hour
			rec.points, rec.cores = rec.points[:0], rec.cores[:0]
		}
	}
}
