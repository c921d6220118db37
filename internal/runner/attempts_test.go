package runner

import (
	"strings"
	"testing"

	"github.com/prometheus/procfs"

	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

func TestDisturbed(t *testing.T) {
	g := study.Noise{MaxStealPct: 10, MaxOutsidePct: 25, Repeats: 1}
	out := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		n    results.Noise
		want string
	}{
		{results.Noise{StealPct: 3, OutsidePct: out(5)}, ""},
		{results.Noise{StealPct: 10, OutsidePct: out(25)}, ""}, // at the thresholds: not beyond
		{results.Noise{StealPct: 12.5}, "steal 12.5% > 10%"},
		{results.Noise{StealPct: 1, OutsidePct: out(40)}, "CPU of processes outside the run 40.0% > 25%"},
		{results.Noise{StealPct: 11, OutsidePct: out(30)}, "steal 11.0% > 10%; CPU of processes outside"},
	} {
		if got := disturbed(c.n, g, false); c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.n, got, c.want)
		}
	}
	// A workload of round trips: the stricter bound, DefaultNoise's
	// when the study's guard does not give one (nic-modes' first sockperf
	// trial ran 2.2 times faster beside 17% outside CPU).
	if got := disturbed(results.Noise{OutsidePct: out(16.7)}, g, true); !strings.HasPrefix(got, "CPU of processes outside the run 16.7% > 5% (round trips") {
		t.Errorf("round trips at 16.7%%: %q", got)
	}
	if got := disturbed(results.Noise{OutsidePct: out(4)}, g, true); got != "" {
		t.Errorf("round trips at 4%%: %q", got)
	}
	if got := disturbed(results.Noise{OutsidePct: out(16.7)}, study.Noise{MaxStealPct: 10, MaxOutsidePct: 25, MaxOutsidePctRoundTrips: 20}, true); got != "" {
		t.Errorf("round trips under the study's own bound of 20%%: %q", got)
	}
	// The collectors' window: below the default 80% it is disturbed,
	// at it not; a study's own bound replaces the default.
	if got := disturbed(results.Noise{WindowPct: out(35), WindowLateS: 1.3}, g, false); got != "the collectors recorded 35% of the measured window < 80% (the last started 1.3 s after the warm-up)" {
		t.Errorf("window of 35%%: %q", got)
	}
	if got := disturbed(results.Noise{WindowPct: out(0), WindowLateS: 3.3, WindowSlowest: "trace 2.9 s"}, g, false); !strings.HasSuffix(got, "(the last started 3.3 s after the warm-up; slowest: trace 2.9 s)") {
		t.Errorf("window of 0%%: %q", got)
	}
	if got := disturbed(results.Noise{WindowPct: out(80)}, g, false); got != "" {
		t.Errorf("window of 80%%: %q", got)
	}
	if got := disturbed(results.Noise{WindowPct: out(60)}, study.Noise{MaxStealPct: 10, MaxOutsidePct: 25, MinWindowPct: 50}, false); got != "" {
		t.Errorf("window of 60%% under the study's bound of 50%%: %q", got)
	}
	if got := (study.Noise{MaxOutsidePct: 3}).OutsideLimit(true); got != 3 {
		t.Errorf("a study's outside bound below the round-trip default: %g, want 3", got)
	}
	if !roundTrips(study.Workload{Tool: "sockperf"}) || !roundTrips(study.Workload{Tool: "ab"}) || roundTrips(study.Workload{Tool: "iperf3"}) {
		t.Error("sockperf and ab set their rate by round trips, iperf3 does not")
	}
	if got := stealPct([]results.CoreStat{{CPUPercent: results.CPUPercent{Steal: 4}}, {CPUPercent: results.CPUPercent{Steal: 8}}}); got != 6 {
		t.Errorf("stealPct = %g, want the mean 6", got)
	}
	// A core offline at the window's end reads 0 and is no core of it.
	w := metrics.Window{Cores: []results.CoreStat{{CPU: 0, CPUPercent: results.CPUPercent{Steal: 4}}, {CPU: 1}}, Offline: []int{1}}
	if got := stealPct(w.Online()); got != 4 {
		t.Errorf("stealPct with cpu1 offline = %g, want 4", got)
	}
}

func TestBusyPct(t *testing.T) {
	a := procfs.CPUStat{User: 100, System: 50, Idle: 800, Iowait: 50}
	b := procfs.CPUStat{User: 130, System: 60, Idle: 850, Iowait: 60} // 40 busy of 100
	if p := busyPct(a, b); p == nil || *p != 40 {
		t.Errorf("busyPct = %v, want 40", p)
	}
	if p := busyPct(a, a); p != nil {
		t.Errorf("no time passed: %v, want nil", *p)
	}
	// All idle, in seconds whose sums round: 0, not -2e-14.
	if p := busyPct(procfs.CPUStat{User: 0.1, Idle: 0.2}, procfs.CPUStat{User: 0.1, Idle: 0.5}); p == nil || *p != 0 {
		t.Errorf("an idle machine: busyPct = %v, want 0", p)
	}
}
