package registry

import (
	"testing"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

// TestDataFlows: the way each tool's measured data goes, which the
// runner holds against the way an impairment place acts on. iperf3 (its
// UDP senders, iperf3's and pktgen, too) sends from the client unless
// reversed; ab's measured bytes are the server's responses; the
// request/response tools' round trips cross both ways; a task moves none.
func TestDataFlows(t *testing.T) {
	for _, c := range []struct {
		name         string
		w            study.Workload
		flow         spec.Flow
		sender, back string
	}{
		{"iperf3 tcp", study.Workload{Tool: "iperf3", Protocol: "tcp"}, spec.ClientToServer, "the client sends", "its ACKs"},
		{"iperf3 tcp reverse", study.Workload{Tool: "iperf3", Protocol: "tcp", Reverse: true}, spec.ServerToClient, "the server sends", "its ACKs"},
		{"iperf3 udp", study.Workload{Tool: "iperf3", Protocol: "udp", Rate: "1G"}, spec.ClientToServer, "the client sends", "its ACKs"},
		{"iperf3 udp from pktgen", study.Workload{Tool: "iperf3", Protocol: "udp", Rate: "1G", Sender: "pktgen"}, spec.ClientToServer, "the client sends", "its ACKs"},
		{"iperf3 udp from pktgen reversed", study.Workload{Tool: "iperf3", Protocol: "udp", Rate: "1G", Sender: "pktgen", Reverse: true}, spec.ServerToClient, "the server sends", "its ACKs"},
		{"ab", study.Workload{Tool: "ab", Protocol: "tcp"}, spec.ServerToClient, "the server sends its responses", "its requests and ACKs"},
		{"sockperf", study.Workload{Tool: "sockperf", Protocol: "udp"}, spec.BothWays, "", ""},
		{"qperf", study.Workload{Tool: "qperf", Protocol: "tcp"}, spec.BothWays, "", ""},
		{"podstartup", study.Workload{Tool: "podstartup"}, "", "", ""},
	} {
		tool, ok := Describe(c.w.Tool)
		if !ok {
			t.Fatalf("%s: no tool %s", c.name, c.w.Tool)
		}
		flow, sender := tool.FlowOf(c.w.SetOptions())
		if flow != c.flow || sender != c.sender || tool.Data.Back != c.back {
			t.Errorf("%s: %q (%q, back %q), want %q (%q, back %q)", c.name, flow, sender, tool.Data.Back, c.flow, c.sender, c.back)
		}
	}
	// Every registered tool states its flow (Check holds it); this list
	// names each, so a new tool is added here with its own.
	for _, tool := range Tools() {
		switch tool.Name {
		case "iperf3", "ab", "sockperf", "qperf", "podstartup":
		default:
			t.Errorf("tool %s: add its data flow to TestDataFlows", tool.Name)
		}
	}
}
