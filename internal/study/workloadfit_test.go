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

// A trial shorter than a tool's driver runs (sockperf: 2 s) is refused
// at spec.duration, once per tool, unless spec.only leaves the tool's
// workloads out; a task (podstartup) has no duration to bound.
func TestMinDuration(t *testing.T) {
	study := func(workloads, duration, only string) string {
		s := strings.Replace(workloadStudy(workloads), "duration: 3s", "duration: "+duration, 1)
		return s + only
	}
	for _, tc := range []struct{ workloads, duration, only, want string }{
		{"[{name: rr, tool: sockperf}, {name: rr2, tool: sockperf, protocol: udp}]", "1s", "",
			"w.yaml:18: spec.duration: 1s is shorter than sockperf runs (at least 2s: sockperf leaves out its first 400 ms and a tail: a 1 s run measures about half a second; workload rr)"},
		{"[{name: rr, tool: sockperf}]", "2s", "", ""},
		{"[{name: tcp, tool: iperf3}, {name: rr, tool: sockperf}]", "1s", "  only: [{workload: tcp}]\n", ""},
		{"[{name: tcp, tool: iperf3}, {name: rr, tool: sockperf, messageSizes: [14, 64]}]", "1s", "  only: [{workload: rr@14B}]\n", "spec.duration: 1s is shorter than sockperf runs"},
		{"[{name: up, tool: podstartup}]", "1s", "", ""},
	} {
		_, err := Parse("w.yaml", []byte(study(tc.workloads, tc.duration, tc.only)), Options{}, testCatalog)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v, want accepted", tc.workloads, tc.duration, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "shorter") != 1):
			t.Errorf("%s %s:\n got %v\nwant %s, once", tc.workloads, tc.duration, err, tc.want)
		}
	}
}

// An impairment a tool cannot measure through (qperf's udp_lat: a lost
// datagram stalls it) is refused at the workload's protocol, naming the
// impairment; not where spec.only leaves the pair out. A workload with
// both ends on the server node (intra-node, hairpin), off every
// impairment's path, is refused as such, unless spec.only keeps it out of
// the impaired cells.
func TestRefusedImpairments(t *testing.T) {
	study := func(workloads, impairments string) string {
		return strings.Replace(workloadStudy(workloads), "  replicas: [1]\n", impairments+"  replicas: [1]\n", 1)
	}
	udp := "[{name: rr, tool: qperf, protocol: udp}, {name: tcp, tool: iperf3}]"
	for _, tc := range []struct{ workloads, impairments, want string }{
		{udp, "  impairments: [none, delay-low, loss-low]\n",
			"w.yaml:15: spec.workloads[0].protocol: qperf udp cannot run through impairment loss-low (spec.impairments[2]): it loses datagrams"},
		{udp, "  impairments: [{name: lossy, loss: 1%}]\n", "impairment lossy (spec.impairments[0])"},
		{udp, "  impairments: [none, delay-low]\n", ""},
		{"[{name: rr, tool: qperf, protocol: tcp}]", "  impairments: [loss-low]\n", ""},
		// Off the path: refused as such (refuseOffPath), not as qperf's,
		// wherever impairAt puts the impairment.
		{"[{name: rr, tool: qperf, protocol: udp, placement: intra-node}]", "  impairments: [loss-low]\n",
			"w.yaml:15: spec.workloads[0].placement: workload rr is intra-node: both its ends are on the server node, so no impairment place"},
		{"[{name: rr, tool: qperf, protocol: tcp, placement: intra-node}, {name: tcp, tool: iperf3}]", "  impairments: [none, loss-low]\n  impairAt: {where: underlay}\n",
			"spec.workloads[0].placement: workload rr is intra-node: both its ends are on the server node"},
		{"[{name: rr, tool: qperf, protocol: udp, placement: intra-node}]", "  impairments: [loss-low]\n  impairAt: {where: client-pods}\n",
			"its cells under loss-low would measure no impairment; leave it out of the impaired cells (spec.only)"},
		{"[{name: rr, tool: qperf, protocol: tcp, placement: intra-node}, {name: tcp, tool: iperf3}]", "  impairments: [none, loss-low]\n  only: [{workload: tcp}, {workload: rr, impairment: none}]\n", ""},
		{"[{name: rr, tool: qperf, protocol: tcp, placement: intra-node}]", "  impairments: [none]\n", ""},
		{"[{name: hp, tool: iperf3, target: hairpin}]", "  impairments: [none, delay-low]\n",
			"spec.workloads[0].target: workload hp is a hairpin (its client in the server pod): both its ends are on the server node"},
		{"[{name: hp, tool: iperf3, target: hairpin}]", "  impairments: [none, delay-low]\n  impairAt: {where: client-pods}\n",
			"spec.workloads[0].target: workload hp is a hairpin"},
		{udp, "  impairments: [none, loss-low]\n  only: [{workload: tcp}, {workload: rr, impairment: none}]\n", ""},
		{udp, "  impairments: [none, loss-low]\n  only: [{impairment: loss-low}]\n", "impairment loss-low"},
	} {
		_, err := Parse("w.yaml", []byte(study(tc.workloads, tc.impairments)), Options{}, testCatalog)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v, want accepted", tc.workloads, tc.impairments, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %s:\n got %v\nwant %s", tc.workloads, tc.impairments, err, tc.want)
		}
	}
}
