package qperf

import "github.com/cnibench/cnibench/internal/workload"

// refuseImpairment is the description's RefuseImpairment: udp_lat
// through an impairment that loses, corrupts or duplicates datagrams.
// qperf's datagram client (socket.c, datagram_client_lat) writes a
// message and then blocks in read(2) without a timeout until the reply
// comes, so one lost request or reply (corruption drops a datagram
// whose checksum fails) stalls it until -t ends, and qperf then prints
// the test's time over the few messages before the loss as a valid
// latency (4.3 µs direct, 7.5 ms with one datagram in 200 dropped by a
// relay); the counts it prints with -vvs look as at a normal end (the
// last reply missing), so a trial cannot tell. A duplicate puts a second
// exchange in flight, and each read then takes the reply that was
// already on its way. tcp_lat retransmits what is lost.
func refuseImpairment(protocol, name string, fields map[string]string) string {
	return workload.RefuseDatagramHazards(protocol, name, fields, "qperf's udp_lat waits for each reply without a timeout: "+
		"one lost datagram stalls it for the rest of the trial, a duplicate puts a second exchange in flight, "+
		"and it prints either as a valid latency; use protocol tcp (tcp_lat retransmits) or leave this impairment out")
}
