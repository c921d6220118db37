package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
)

// TestCPPPreflightRecordsEvent: a study with cpp: true gets its event
// chosen once in preflight, and a note (env.json) says which and why.
// perf is faked: the first answer is this machine's real "not supported"
// line, the second a modelled count (see internal/metrics/cpp/testdata).
func TestCPPPreflightRecordsEvent(t *testing.T) {
	if err := cpp.Check(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	for out, want := range map[string]cpp.Event{
		"<not supported>;;cycles;0;100.00;;\n": cpp.CPUClock,
		"4731962;;cycles;2812374;100.00;;\n":   cpp.Cycles,
	} {
		calls := 0
		// Count the stat probes: a countable answer is followed by one
		// sampling probe (perf record), answered alike.
		run := func(_ context.Context, argv []string) ([]byte, error) {
			if argv[1] == "stat" {
				calls++
			}
			return []byte(out), nil
		}
		p := &plan{}
		s := stubStudy(t, "[{name: a, tool: iperf3, cpp: true}, {name: b, tool: iperf3, cpp: true}, {name: c, tool: iperf3}]")
		if err := cppPreflight(context.Background(), s, p, run); err != nil {
			t.Fatal(err)
		}
		if calls != 1 || p.cppEvent.Name != want.Name || p.cppEvent.Unit != want.Unit || p.cppEvent.Period != want.Period {
			t.Errorf("%q: %d probes, event %+v", out, calls, p.cppEvent)
		}
		if len(p.notes) != 1 || !strings.Contains(p.notes[0], "perf event "+want.Name+" (metrics cpp_*_"+want.Unit) ||
			!strings.Contains(p.notes[0], p.cppEvent.Reason) {
			t.Errorf("%q: notes %q", out, p.notes)
		}
	}
	// No CPP workload: no probe, no note.
	p := &plan{}
	run := func(context.Context, []string) ([]byte, error) { t.Error("probed without cpp"); return nil, nil }
	if err := cppPreflight(context.Background(), stubStudy(t, "[{tool: iperf3}]"), p, run); err != nil || len(p.notes) != 0 {
		t.Errorf("%v %q", err, p.notes)
	}
}
