package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/sysfs"
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
	err := checkIdleBounds(parseSpec(t, spec("2us")), localIdleStates(sysfs.Dir(root)))
	// (preflight puts the file and line in front, as for rps.cpus.)
	want := "spec.tunings[1].cpuIdle.maxExitLatency: tuning poll (side server): no enabled idle state of this machine's CPU 0 exits " +
		"slower than 2 µs (POLL (0 µs), C1 (2 µs), C6 (133 µs) disabled): the bound would change nothing there"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err := checkIdleBounds(parseSpec(t, spec("1us")), localIdleStates(sysfs.Dir(root))); err != nil {
		t.Errorf("a bound below C1: %v", err)
	}
	if err := checkIdleBounds(parseSpec(t, spec("0us")), localIdleStates(sysfs.Dir(t.TempDir()))); err != nil {
		t.Errorf("no idle states: %v", err)
	}
}

// On a cluster the states are the nodes' (read by their agents): a bound
// is refused where it changes nothing on a node of an end the tuning
// goes on (server by default, client, or both), naming that node's
// states; another node's deeper states do not save it.
func TestCheckIdleBoundsNodes(t *testing.T) {
	c1 := []cpuidle.State{{Name: "POLL"}, {Index: 1, Name: "C1", LatencyUS: 2}}
	halt := []cpuidle.State{{Name: "POLL"}, {Index: 1, Name: "haltpoll idle", LatencyUS: 1}}
	tuning := func(side string) *study.Study {
		return parseSpec(t, "  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: poll, side: "+side+", cpuIdle: {maxExitLatency: 1us}}\n"+
			"  workloads: [{tool: sockperf, protocol: tcp}]\n")
	}
	nodes := func(server, client []cpuidle.State) []engine.NodeIdle {
		return []engine.NodeIdle{
			{Where: "node w1's", Sides: []string{study.SideServer}, States: server},
			{Where: "node w2's", Sides: []string{study.SideClient}, States: client},
		}
	}
	for _, c := range []struct {
		side           string
		server, client []cpuidle.State
		refused        string // the node named, "" when it passes
	}{
		{"server", c1, halt, ""},
		{"server", halt, c1, "node w1's"},
		{"client", halt, c1, ""},
		{"client", c1, halt, "node w2's"},
		{"both", c1, c1, ""},
		{"both", c1, halt, "node w2's"},
		{"both", halt, c1, "node w1's"},
	} {
		err := checkIdleBounds(tuning(c.side), nodes(c.server, c.client))
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("side %s, server %v, client %v: %v", c.side, c.server, c.client, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), "of "+c.refused+" CPU 0")):
			t.Errorf("side %s, server %v, client %v: %v, want %s named", c.side, c.server, c.client, err, c.refused)
		}
	}
	err := checkIdleBounds(tuning("server"), nodes(halt, c1))
	want := "spec.tunings[1].cpuIdle.maxExitLatency: tuning poll (side server): no enabled idle state of node w1's CPU 0 exits " +
		"slower than 1 µs (POLL (0 µs), haltpoll idle (1 µs)): the bound would change nothing there"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	// One node holding both ends is checked for either.
	one := []engine.NodeIdle{{Where: "node w1's", Sides: []string{study.SideServer, study.SideClient}, States: halt}}
	if err := checkIdleBounds(tuning("client"), one); err == nil {
		t.Error("a client-side bound that changes nothing on the one node passed")
	}
}
