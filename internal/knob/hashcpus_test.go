package knob

import (
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/study"
)

// The tuning knob says how many CPUs its RPS mask spreads flows over by
// their hash: every CPU of the end for rps and rps+, all but one for
// rps-7, the CPU list's for a list; none for a tuning with RFS (it
// follows the reader's CPU) or without RPS, and the larger end's for a
// tuning on both ends. HashSpread names the knob.
func TestTuningHashCPUs(t *testing.T) {
	builtin := func(name string) study.Tuning {
		tu, ok := study.BuiltinTuning(name)
		if !ok {
			t.Fatalf("no built-in tuning %s", name)
		}
		return tu
	}
	both := builtin("rps")
	both.Side, both.RPS = study.SideBoth, &study.RPS{CPUs: "0-1"}
	client := builtin("rps")
	client.Side = study.SideClient
	for _, tc := range []struct {
		tuning study.Tuning
		want   int
	}{
		{builtin("rps"), 4}, {builtin("rps+"), 4}, {builtin("rps-7"), 3},
		{builtin("rfs"), 0}, {builtin("rfs+"), 0}, {builtin("baseline"), 0},
		{both, 2}, {client, 6},
	} {
		tgt := &Target{Tuning: tc.tuning, SteerCPUs: cpuset.Range(4), SoftIRQCore: 0, ClientSteerCPUs: cpuset.Range(6)}
		n, name := HashSpread(Trial, tgt)
		if n != tc.want || (n > 0) != (name == "tuning") {
			t.Errorf("%s (side %q): %d CPUs by knob %q, want %d", tc.tuning.Name, tc.tuning.Side, n, name, tc.want)
		}
	}
	// No CPUs known (a target the runner has not filled): nothing.
	if n, _ := HashSpread(Trial, &Target{Tuning: builtin("rps")}); n != 0 {
		t.Errorf("no CPUs: %d", n)
	}
}
