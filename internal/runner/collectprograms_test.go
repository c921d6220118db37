package runner

import (
	"slices"
	"testing"
)

// A collector the study enables whose program is missing is noted once,
// with the package and the workloads that lose its metrics; a study that
// enables none, or a machine that has them, gets no note.
func TestMissingCollectorPrograms(t *testing.T) {
	s := parseSpec(t, "  datapaths: [bridge]\n  workloads: [{name: tcp, tool: iperf3, counters: true}, {name: rr, tool: sockperf, counters: true}, {name: plain, tool: iperf3}]\n")
	noIptables := func(p string) bool { return p != "iptables-save" }
	got := missingCollectorPrograms(s, noIptables)
	want := []string{"collector iptables: iptables-save is not installed here (apt-get install iptables), so workloads tcp, rr will have no iptables_* metrics"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := missingCollectorPrograms(s, func(string) bool { return true }); got != nil {
		t.Errorf("every program installed: %q", got)
	}
	plain := parseSpec(t, "  datapaths: [bridge]\n  workloads: [{name: plain, tool: iperf3}]\n")
	if got := missingCollectorPrograms(plain, noIptables); got != nil {
		t.Errorf("no counters: %q", got)
	}
}
