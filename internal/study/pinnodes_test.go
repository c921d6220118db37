package study

import (
	"strings"
	"testing"
)

// nodesStudy is workloadStudy with the server node on CPUs 0-1 and the
// client node on 2-3 (the workloads' line becomes 16).
func nodesStudy(workloads string) string {
	return strings.Replace(workloadStudy(workloads), "  datapaths:", "  nodes: {server: {cpus: \"0-1\"}, client: {cpus: \"2-3\"}}\n  datapaths:", 1)
}

// A pin's CPU list outside its end's node's CPUs is refused at the pin's
// field: taskset would move the end onto the other node's CPUs (the
// reviewer's case: the server pinned to CPU 3 of the client node). The
// client's node is the server node when intra-node or hairpin.
func TestPinOutsideNodeCPUs(t *testing.T) {
	for _, tc := range []struct{ workloads, want string }{
		{`[{tool: iperf3, pin: {server: "3"}}]`,
			`w.yaml:16: spec.workloads[0].pin.server: "3": the server runs on the server node, whose CPUs are 0-1 (spec.nodes.server.cpus); taskset would move it off them onto 3: pin it among 0-1`},
		{`[{tool: iperf3, pin: {server: "1", client: "0,2"}}]`,
			`spec.workloads[0].pin.client: "0,2": the client runs on the client node, whose CPUs are 2-3 (spec.nodes.client.cpus); taskset would move it off them onto 0`},
		{`[{tool: iperf3, placement: intra-node, pin: {client: "2"}}]`,
			`spec.workloads[0].pin.client: "2": the client runs on the server node (placement: intra-node), whose CPUs are 0-1 (spec.nodes.server.cpus)`},
		{`[{tool: iperf3, target: hairpin, pin: {server: same-numa, client: "3"}}]`,
			`spec.workloads[0].pin.client: "3": the client runs on the server node (target: hairpin runs it in the server pod), whose CPUs are 0-1`},
	} {
		_, err := Parse("w.yaml", []byte(nodesStudy(tc.workloads)), Options{}, testCatalog)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.workloads, err, tc.want)
		}
	}
	for _, ok := range []string{
		`[{tool: iperf3, pin: {server: "0-1", client: "2-3"}}]`,
		`[{tool: iperf3, placement: intra-node, pin: {server: "0", client: "1"}}]`,
		`[{tool: iperf3, pin: {server: other-core, client: "3"}}]`, // names resolve at preflight
	} {
		if _, err := Parse("w.yaml", []byte(nodesStudy(ok)), Options{}, testCatalog); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// A node sharing the machine's CPUs bounds nothing here.
	if _, err := Parse("w.yaml", []byte(workloadStudy(`[{tool: iperf3, pin: {server: "3", client: "0"}}]`)), Options{}, testCatalog); err != nil {
		t.Errorf("nodes without cpus: %v", err)
	}
}
