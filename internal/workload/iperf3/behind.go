package iperf3

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

// A UDP sender that falls behind the rate asked offers the path less than
// the sample's offered_bps says, and its loss is of what it sent. On one
// machine that is common: a veth path's receive work runs in softirq on
// the sending core, and iperf3 asked for 4 Gbit/s sent about 720 Mbit/s
// (nic-modes' udp-chhc on 2 cores). The run says so once; the numbers are
// per trial in samples.jsonl.

// The warnings, one per sender (said once per run).
var (
	pktgenBehind = fmt.Sprintf("pktgen sent less than %.0f%% of the rate asked in some trials or loss-ceiling probes (sent_bps beside offered_bps in samples.jsonl): "+
		"its CPU fell behind the schedule, so their loss is of what it sent; where a ceiling probe that passed fell behind, "+
		"the ceiling is what it sent (ceiling_sender_bound: 1), the sender's limit, not the path's", 100*ceiling.BehindShare)
	iperf3Behind = fmt.Sprintf("iperf3 sent less than %.0f%% of the UDP rate asked in some trials or loss-ceiling probes (sender_bitrate beside offered_bps in samples.jsonl): "+
		"its sender was short of CPU (or a full queue held its socket), so their loss is of what it sent; where a ceiling probe that passed fell behind, "+
		"the ceiling is what it sent (ceiling_sender_bound: 1), the sender's limit, not the path's; "+
		"on a kernel with pktgen the workload's sender: pktgen offers the rate from the kernel (--set workloads.NAME.sender=pktgen)", 100*ceiling.BehindShare)
)

// behindWarning is the warning of the search's or trial's sender.
func behindWarning(sender string) string {
	if sender == study.SenderPktgen {
		return pktgenBehind
	}
	return iperf3Behind
}

// fellBehind reports whether some pair's sent metric (bit/s) is below
// ceiling.BehindShare of asked, the rate each pair was asked to offer.
// Pairs without it do not say, and do not count.
func fellBehind(per []map[string]float64, sent string, asked float64) bool {
	for _, m := range per {
		if ceiling.Behind(m[sent], asked) {
			return true
		}
	}
	return false
}
