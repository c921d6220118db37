package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// An ab concurrency whose requests in flight need more open files than
// the hard limit is refused at the workload's field, with the largest
// concurrency that fits; one that fits, a tool without the bound and an
// unknown limit pass.
func TestCheckFileLimit(t *testing.T) {
	st := stubStudy(t, "[{tool: ab, concurrency: [100, 9968, 9969]}]")
	err := checkFileLimit(st, 20000)
	if err == nil {
		t.Fatal("concurrency 9969 with a hard limit of 20000: no error")
	}
	for _, want := range []string{"spec.workloads[0]", "concurrency 9969 needs about 20002 open files", "hard limit of 20000", "at most 9968"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := checkFileLimit(stubStudy(t, "[{tool: ab, concurrency: [100, 9968]}]"), 20000); err != nil {
		t.Errorf("9968 fits 20000 files: %v", err)
	}
	if err := checkFileLimit(st, 0); err != nil {
		t.Errorf("unknown limit: %v", err)
	}
	if err := checkFileLimit(stubStudy(t, "[{tool: iperf3}]"), 10); err != nil {
		t.Errorf("iperf3 has no bound: %v", err)
	}
}

// On this machine's nodes preflight applies the bound (exit 2, nothing
// built); on a cluster's it does not: the pods have their runtime's limit.
func TestPreflightFileLimit(t *testing.T) {
	hard := fileLimit()
	if hard == 0 || hard > 1<<30 {
		t.Skipf("skipped: hard open-file limit %d leaves no concurrency ab takes over it", hard)
	}
	c := (hard-64)/2 + 1
	if c > 20000 {
		t.Skipf("skipped: hard open-file limit %d is above what ab's largest concurrency needs", hard)
	}
	st := stubStudy(t, fmt.Sprintf("[{tool: ab, concurrency: [%d]}]", c))
	if _, err := preflight(context.Background(), stubEngine{}, st); err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "open files") {
		t.Errorf("local preflight: %v", err)
	}
	if _, err := preflight(context.Background(), stubEngine{remote: true}, st); err != nil && strings.Contains(err.Error(), "open files") {
		t.Errorf("cluster preflight applied this machine's limit: %v", err)
	}
}
