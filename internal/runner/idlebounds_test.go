package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuidle"
)

// A cpuIdle bound that no enabled state of this machine's CPU 0 exceeds
// is refused at its line, naming the states; one that bounds a state,
// and a machine without states (the feature check's), pass.
func TestCheckIdleBounds(t *testing.T) {
	root := t.TempDir()
	for p, v := range map[string]string{
		"cpu0/cpuidle/state0/name": "POLL", "cpu0/cpuidle/state0/latency": "0",
		"cpu0/cpuidle/state1/name": "C1", "cpu0/cpuidle/state1/latency": "2",
		"cpu0/cpuidle/state2/name": "C6", "cpu0/cpuidle/state2/latency": "133", "cpu0/cpuidle/state2/disable": "1",
	} {
		f := filepath.Join(root, cpuidle.Dir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(bound string) string {
		return "  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: poll, cpuIdle: {maxExitLatency: " + bound + "}}\n" +
			"  workloads: [{tool: sockperf, protocol: tcp}]\n"
	}
	err := checkIdleBounds(parseSpec(t, spec("2us")), localIdleStates(cpuidle.DirReader(root)))
	// (preflight puts the file and line in front, as for rps.cpus.)
	want := "spec.tunings[1].cpuIdle.maxExitLatency: tuning poll: no enabled idle state of this machine's CPU 0 exits " +
		"slower than 2 µs (POLL (0 µs), C1 (2 µs), C6 (133 µs) disabled): the bound would change nothing"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err := checkIdleBounds(parseSpec(t, spec("1us")), localIdleStates(cpuidle.DirReader(root))); err != nil {
		t.Errorf("a bound below C1: %v", err)
	}
	if err := checkIdleBounds(parseSpec(t, spec("0us")), localIdleStates(cpuidle.DirReader(t.TempDir()))); err != nil {
		t.Errorf("no idle states: %v", err)
	}
}

// On a cluster the states are the nodes' (read by their agents): a bound
// is refused only where it changes nothing on either node, and the error
// names both nodes' states.
func TestCheckIdleBoundsNodes(t *testing.T) {
	c1 := []cpuidle.State{{Name: "POLL"}, {Index: 1, Name: "C1", LatencyUS: 2}}
	halt := []cpuidle.State{{Name: "POLL"}, {Index: 1, Name: "haltpoll idle", LatencyUS: 1}}
	s := parseSpec(t, "  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: poll, cpuIdle: {maxExitLatency: 1us}}\n"+
		"  workloads: [{tool: sockperf, protocol: tcp}]\n")
	if err := checkIdleBounds(s, map[string][]cpuidle.State{"node w1's": c1, "node w2's": halt}); err != nil {
		t.Errorf("a bound below w1's C1: %v", err)
	}
	err := checkIdleBounds(s, map[string][]cpuidle.State{"node w2's": halt, "node w1's": halt})
	want := "spec.tunings[1].cpuIdle.maxExitLatency: tuning poll: no enabled idle state of node w1's or node w2's CPU 0 exits " +
		"slower than 1 µs (node w1's: POLL (0 µs), haltpoll idle (1 µs); node w2's: POLL (0 µs), haltpoll idle (1 µs)): the bound would change nothing"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
