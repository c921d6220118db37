package cpuidle

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

func i64(v int64) *int64 { return &v }

// ReadLimits records each online CPU's own limit ("0" none: -1, "n/a":
// 0), the global one from its file (four bytes) and haltpoll's window.
func TestReadLimits(t *testing.T) {
	root := t.TempDir()
	putFile(t, root, "online", "0-2")
	putFile(t, root, "cpu0/power/"+LimitKnob, "0")
	putFile(t, root, "cpu1/power/"+LimitKnob, "n/a")
	putFile(t, root, "cpu2/power/"+LimitKnob, "20")
	hp := filepath.Join(root, "module/haltpoll/parameters/guest_halt_poll_ns")
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hp, []byte("200000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dma := filepath.Join(t.TempDir(), "cpu_dma_latency")
	if err := os.WriteFile(dma, []byte{1, 0, 0, 0}, 0o644); err != nil { // 1 µs, little-endian
		t.Fatal(err)
	}
	l := ReadLimits(sysfs.Dir(root), dma)
	if got := fmt.Sprint(l.ResumeUS); got != "map[0:-1 1:0 2:20]" || l.GlobalUS == nil || *l.GlobalUS != 1 || l.HaltPollNS == nil || *l.HaltPollNS != 200000 {
		t.Errorf("ReadLimits = %+v (resume %v)", l, l.ResumeUS)
	}
	if l := ReadLimits(sysfs.Dir(root), ""); l.GlobalUS != nil {
		t.Errorf("no global file: %+v", l)
	}
}

// The loosest bound is the largest over the CPUs of the smaller of the
// global limit and the CPU's own; none read, none known.
func TestLoosest(t *testing.T) {
	for _, c := range []struct {
		l    *results.IdleLimits
		want string
	}{
		{nil, "0 false"},
		{&results.IdleLimits{GlobalUS: i64(1)}, "0 false"},
		{&results.IdleLimits{ResumeUS: map[int]int64{0: -1, 1: 0}}, fmt.Sprint(DefaultDMALatencyUS, " true")},
		{&results.IdleLimits{GlobalUS: i64(1), ResumeUS: map[int]int64{0: -1, 1: -1}}, "1 true"},
		{&results.IdleLimits{GlobalUS: i64(DefaultDMALatencyUS), ResumeUS: map[int]int64{0: 0, 1: 20}}, "20 true"},
		{&results.IdleLimits{GlobalUS: i64(5), ResumeUS: map[int]int64{0: 0, 1: 20}}, "5 true"},
	} {
		us, ok := Loosest(c.l)
		if got := fmt.Sprint(us, " ", ok); got != c.want {
			t.Errorf("Loosest(%+v) = %s, want %s", c.l, got, c.want)
		}
	}
}

// Under recorded limits a slow state counts only where a governor may
// still select it: menu skips one slower than every CPU's bound (tuned's
// latency-performance, 1 µs), haltpoll halts at any bound above 0 unless
// its poll window outlasts a round trip, whatever the disable files.
func TestSlowWakeUnderLimits(t *testing.T) {
	menu := []results.IdleState{{Name: "POLL"}, {Name: "C1E", LatencyUS: 10}, {Name: "C6", LatencyUS: 133}}
	halt := []results.IdleState{{Name: "POLL"}, {Name: "haltpoll idle", LatencyUS: 1, Disabled: true}}
	none := map[int]int64{0: -1, 1: -1}
	for _, c := range []struct {
		idle *results.CPUIdle
		want string
	}{
		{&results.CPUIdle{Driver: "intel_idle", Governor: "menu", States: menu, Limits: &results.IdleLimits{GlobalUS: i64(1), ResumeUS: none}}, "[]"},
		{&results.CPUIdle{Driver: "intel_idle", Governor: "menu", States: menu, Limits: &results.IdleLimits{GlobalUS: i64(DefaultDMALatencyUS), ResumeUS: map[int]int64{0: 0, 1: 50}}}, "[C1E]"},
		{&results.CPUIdle{Driver: "intel_idle", Governor: "menu", States: menu, Limits: &results.IdleLimits{ResumeUS: none}}, "[C1E C6]"},
		{&results.CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: halt, Limits: &results.IdleLimits{GlobalUS: i64(1), ResumeUS: none, HaltPollNS: i64(0)}}, "[haltpoll idle]"},
		{&results.CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: halt, Limits: &results.IdleLimits{ResumeUS: map[int]int64{0: 0, 1: 0}}}, "[]"},
		{&results.CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: halt, Limits: &results.IdleLimits{ResumeUS: none, HaltPollNS: i64(200000)}}, "[]"},
	} {
		var names []string
		for _, s := range SlowWake(c.idle) {
			names = append(names, s.Name)
		}
		if got := fmt.Sprint(names); got != c.want {
			t.Errorf("SlowWake(%+v, limits %+v) = %s, want %s", c.idle, c.idle.Limits, got, c.want)
		}
	}
}
