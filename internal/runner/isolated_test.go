package runner

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// On a machine booted with isolcpus/nohz_full the kernel keeps RPS off
// the isolated CPUs (Linux 5.10+): "all" leaves them out of the mask,
// with a note, and a list naming one is refused at preflight, at its
// field. Before, the mask named them and every trial failed its
// read-back after the nodes were built.
func TestRPSLeavesIsolatedCPUsOut(t *testing.T) {
	spec := func(cpus string) string {
		return "  datapaths: [bridge]\n  tunings:\n    - baseline\n    - {name: spread, rps: {cpus: \"" + cpus + "\"}}\n" +
			"  workloads: [{tool: sockperf, protocol: tcp}]\n"
	}
	p := &plan{machine: cpuset.Range(8), isolated: cpuset.Set{2, 3}}

	s := parseSpec(t, spec("all"))
	if err := p.checkRPSCPUs(s); err != nil {
		t.Fatalf("all: %v", err)
	}
	if got := p.steerCPUs().String(); got != "0-1,4-7" {
		t.Errorf("steer CPUs %s, want 0-1,4-7", got)
	}
	if notes := p.isolatedNote(s); len(notes) != 1 || !strings.Contains(notes[0], "2-3") {
		t.Errorf("notes %q, want one naming the isolated CPUs 2-3", notes)
	}

	err := p.checkRPSCPUs(parseSpec(t, spec("1-3")))
	if err == nil || !strings.Contains(err.Error(), "spec.tunings[1].rps.cpus") || !strings.Contains(err.Error(), "isolated") {
		t.Errorf("1-3: %v, want refused at spec.tunings[1].rps.cpus naming the isolated CPUs", err)
	}

	p.isolated = cpuset.Range(8)
	if err := p.checkRPSCPUs(s); err == nil || !strings.Contains(err.Error(), "isolated") {
		t.Errorf("every CPU isolated: %v, want refused", err)
	}
}
