package study

import (
	"strings"
	"testing"
)

// refusedWorkloads checks that the study with these workloads is refused
// by one one-line error with file, line and want; "" wants it accepted.
func refusedWorkloads(t *testing.T, workloads, want string) {
	t.Helper()
	_, err := Parse("w.yaml", []byte(workloadStudy(workloads)), Options{}, testCatalog)
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want accepted", workloads, err)
	case want == "":
	case err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n"):
		t.Errorf("%s:\n got %v\nwant %s", workloads, err, want)
	}
}

// The pktgen sender's payload is the length: one it cannot send is
// refused at the length (or the sweep's element) before anything is
// built; a size written as study files do ("2K") is that many bytes.
func TestPktgenLengths(t *testing.T) {
	for workloads, want := range map[string]string{
		"[{tool: iperf3, protocol: udp, rate: 1G, sender: pktgen, length: 8}]":                           "w.yaml:15: spec.workloads[0].length: the pktgen sender sends a UDP payload of 18 to 65493 bytes",
		"[{tool: iperf3, protocol: udp, rate: 1G, sender: pktgen, lengths: [1K, 17]}]":                   "spec.workloads[0].lengths[1]: the pktgen sender sends a UDP payload of 18 to 65493 bytes (its smallest frame is 60 bytes, its largest what an IP length holds), got 17",
		"[{tool: iperf3, protocol: udp, lossCeiling: 3%, ceilingSearch: {sender: pktgen}, length: 64K}]": "spec.workloads[0].length: the pktgen sender sends a UDP payload of 18 to 65493 bytes",
		"[{tool: iperf3, protocol: udp, rate: 1G, sender: pktgen, lengths: [18, 2K, 65493]}]":            "",
		"[{tool: iperf3, protocol: udp, rate: 1G, length: 17}]":                                          "",
	} {
		refusedWorkloads(t, workloads, want)
	}
}

// iperf3 refuses a UDP block below 16 B (its sequence number and
// timestamp) where a TCP block may be 1 B: the protocol's minimum is
// refused at the length, before any node is built.
func TestUDPLengthMinimum(t *testing.T) {
	for workloads, want := range map[string]string{
		"[{tool: iperf3, protocol: udp, rate: 1G, length: 8}]":            "w.yaml:15: spec.workloads[0].length: length must be between 16 and 65507 for udp",
		"[{tool: iperf3, protocol: udp, rate: 1G, lengths: [16, 15]}]":    "spec.workloads[0].lengths[1]: length must be between 16 and 65507 for udp",
		"[{tool: iperf3, protocol: udp, rate: 1G, lengths: [16, 65507]}]": "",
		"[{tool: iperf3, protocol: tcp, length: 8}]":                      "",
	} {
		refusedWorkloads(t, workloads, want)
	}
}
