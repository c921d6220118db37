package sockperf

import "github.com/cnibench/cnibench/internal/workload"

// refuseImpairment is the description's RefuseImpairment: ping-pong
// over UDP through an impairment that loses, corrupts or duplicates
// datagrams. sockperf's client waits for each reply and never resends
// (client.cpp), so one lost datagram stalls it for the rest of the test,
// and it prints the time before the loss as a valid result with no
// dropped message counted (checkWindow fails such a trial when it
// happens without an impairment); a duplicate puts a second exchange in
// flight. TCP retransmits what is lost.
func refuseImpairment(protocol, name string, fields map[string]string) string {
	return workload.RefuseDatagramHazards(protocol, name, fields, "sockperf's ping-pong client waits for each reply and never resends: "+
		"one lost datagram stalls it for the rest of the trial; use protocol tcp (TCP retransmits) or leave this impairment out")
}
