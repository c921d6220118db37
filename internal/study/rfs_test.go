package study

import (
	"strings"
	"testing"
)

// rfsStudy is boundsBase with its tuning's rps and rfs lines replaced by
// rfs (the tuning's lines from line 10 on).
func rfsStudy(t *testing.T, rfs string) string {
	t.Helper()
	old := "      rps: {cpus: all}\n      rfs: {sockFlowEntries: 4096, flowCnt: 4096}\n"
	if !strings.Contains(boundsBase, old) {
		t.Fatal("boundsBase has no rps and rfs lines to replace")
	}
	return strings.Replace(boundsBase, old, rfs, 1)
}

// RFS without RPS is a tuning the kernel takes: get_rps_cpu returns early
// only where a queue has neither an RPS map nor a flow table, so a flow
// table alone steers each flow to its reader's CPU. Validation refused it
// ("RFS needs an RPS mask").
func TestRFSWithoutRPSParses(t *testing.T) {
	for _, rfs := range []string{
		"      rfs: {sockFlowEntries: 32768, flowCnt: 32768}\n",
		"      rfs: {sockFlowEntries: 32768, flowCnt: 4096}\n      pods: true\n      devices: underlay\n      side: both\n",
	} {
		s, err := Parse("bounds.yaml", []byte(rfsStudy(t, rfs)), Options{}, testCatalog)
		if err != nil {
			t.Errorf("%q: %v", rfs, err)
			continue
		}
		if tu := s.Spec.Tunings[1]; tu.RPS != nil || tu.RFS == nil || tu.IsBaseline() {
			t.Errorf("%q: tuning %+v, want RFS and no RPS", rfs, tu)
		}
	}
}

// RFS needs both of its tables: get_rps_cpu reads the host's socket flow
// table only on a queue with a flow table (flow_table && sock_flow_table),
// so one alone steers nothing. Each such tuning gets one error naming the
// file, the line and the field left out (it got "rfs: sockFlowEntries and
// flowCnt must be > 0" and a second error for the same value).
func TestRFSHalfRefused(t *testing.T) {
	for _, tc := range []struct{ rfs, want string }{
		{"      rfs: {flowCnt: 4096}\n", "bounds.yaml:10: spec.tunings[1].rfs.sockFlowEntries: missing: RFS needs both tables"},
		{"      rfs: {sockFlowEntries: 4096}\n", "bounds.yaml:10: spec.tunings[1].rfs.flowCnt: missing: RFS needs both tables"},
		{"      rfs: {sockFlowEntries: 4096, flowCnt: 0}\n", "bounds.yaml:10: spec.tunings[1].rfs.flowCnt: missing: RFS needs both tables"},
		{"      rps: {cpus: all}\n      rfs: {sockFlowEntries: 0, flowCnt: 4096}\n", "bounds.yaml:11: spec.tunings[1].rfs.sockFlowEntries: missing: RFS needs both tables"},
		{"      rfs: {}\n", "bounds.yaml:10: spec.tunings[1].rfs: sockFlowEntries and flowCnt missing: RFS needs both tables"},
	} {
		_, err := Parse("bounds.yaml", []byte(rfsStudy(t, tc.rfs)), Options{}, testCatalog)
		if err == nil {
			t.Errorf("%q accepted", tc.rfs)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "more problem") || strings.Contains(msg, "\n") {
			t.Errorf("%q:\n got %s\nwant one error starting %s", tc.rfs, msg, tc.want)
		}
	}
}
