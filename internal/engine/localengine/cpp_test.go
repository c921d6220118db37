package localengine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
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
		s := stubStudy(t, "[{name: a, tool: iperf3, cpp: true}, {name: b, tool: iperf3, cpp: true}, {name: c, tool: iperf3}]")
		ev, note, err := cppPreflight(context.Background(), s, cpp.Check, run)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 || ev.Name != want.Name || ev.Unit != want.Unit || ev.Period != want.Period {
			t.Errorf("%q: %d probes, event %+v", out, calls, ev)
		}
		if !strings.Contains(note, "perf event "+want.Name+" (metrics cpp_*_"+want.Unit) ||
			!strings.Contains(note, ev.Reason) {
			t.Errorf("%q: note %q", out, note)
		}
	}
	// No CPP workload: no probe, no note.
	run := func(context.Context, []string) ([]byte, error) { t.Error("probed without cpp"); return nil, nil }
	if _, note, err := cppPreflight(context.Background(), stubStudy(t, "[{tool: iperf3}]"), cpp.Check, run); err != nil || note != "" {
		t.Errorf("%v %q", err, note)
	}
}

// A machine without perf is refused at the first CPP workload's cpp
// field (file:line), with the --set that runs the study without CPP, and
// that --set parses into a study that needs no perf.
func TestCPPPreflightRefusalSaysWhereAndWayRound(t *testing.T) {
	noPerf := func() error { return errors.New("perf is not installed") }
	run := func(context.Context, []string) ([]byte, error) { t.Error("probed without perf"); return nil, nil }
	s := stubStudy(t, "[{name: a, tool: iperf3}, {name: b, tool: iperf3, cpp: true}, {name: c, tool: iperf3, cpp: true}]")
	_, _, err := cppPreflight(context.Background(), s, noPerf, run)
	if err == nil {
		t.Fatal("no perf: not refused")
	}
	msg := s.Locate(err).Error()
	want := "s.yaml:7: spec.workloads[1].cpp: workload b: perf is not installed (to run without: " +
		"--set workloads.b.cpp=false --set workloads.c.cpp=false)"
	if msg != want {
		t.Errorf("refusal\n %s\nwant\n %s", msg, want)
	}
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()}
	set := study.Options{Set: []string{"workloads.b.cpp=false", "workloads.c.cpp=false"}}
	s2, err := study.Parse("s.yaml", []byte(stubSource("[{name: a, tool: iperf3}, {name: b, tool: iperf3, cpp: true}, {name: c, tool: iperf3, cpp: true}]")), set, cat)
	if err != nil {
		t.Fatal(err)
	}
	if _, note, err := cppPreflight(context.Background(), s2, noPerf, run); err != nil || note != "" {
		t.Errorf("with the --set: %v %q", err, note)
	}
}

func stubStudy(t *testing.T, workloads string) *study.Study {
	t.Helper()
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()}
	s, err := study.Parse("s.yaml", []byte(stubSource(workloads)), study.Options{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func stubSource(workloads string) string {
	return `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: s}
spec:
  datapaths: [bridge]
  tunings: [baseline]
  workloads: ` + workloads + `
  replicas: [1]
  trials: 1
  duration: 3s
`
}
