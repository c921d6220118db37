package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/topology"
)

// Placement names are resolved at preflight; a name this machine cannot
// honour is a preflight error (exit 2) unless the study marks instead,
// and what each name resolved to becomes a note for env.json.
func TestPreflightPlacementNames(t *testing.T) {
	topo, err := topology.Read("/sys")
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	if topo.Nodes() == 1 {
		_, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-numa}}]"))
		if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "workload iperf3-tcp: pin.server other-numa: placement not possible on this machine: this machine has one NUMA node") {
			t.Errorf("other-numa on one NUMA node: %v", err)
		}
		p, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-numa, fallback: mark}}]"))
		if err != nil {
			t.Fatalf("with fallback mark: %v", err)
		}
		if !strings.Contains(strings.Join(p.notes, "\n"), "NOT COMPARABLE") {
			t.Errorf("notes %q lack the marking", p.notes)
		}
	}
	if len(topo.CPUs) >= 2 {
		p, err := preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, pin: {server: other-core, client: '0'}}]"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(p.notes, "\n"), "pin.server other-core resolved to CPUs") {
			t.Errorf("notes %q", p.notes)
		}
	}
	_, err = preflight(context.Background(), stubEngine{remote: true}, stubStudy(t, "[{tool: iperf3, pin: {server: same-core}}]"))
	if err == nil || !IsPreflight(err) || !strings.Contains(err.Error(), "the kube engine's nodes are other machines") {
		t.Errorf("names on a remote engine: %v", err)
	}
	_, err = preflight(context.Background(), stubEngine{}, stubStudy(t, "[{tool: iperf3, mss: 1460}]"))
	if err != nil {
		t.Errorf("mss 1460 on bridge at MTU 1500: %v", err)
	}
}
