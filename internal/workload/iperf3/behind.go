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

// pktgenRefused says that pktgen's device refused packets
// (MetricRefused), which are counted as sent and lost, not as the
// generator falling behind: before, they were neither, and a datapath's
// drop read as ~0% loss and a sender behind its schedule.
const pktgenRefused = "pktgen's device refused packets in some trials (refused_count in samples.jsonl: pktgen's errors, " +
	"its driver returning NET_XMIT_DROP, as a veth does when its peer's backlog is full): the path's first hop dropped them, " +
	"so they are counted in packets_count, lost_count and lost_percent, and in sent_bps, the generator having sent them on its schedule; " +
	"pktgen sends on until its count of packets that passed is reached, so such a generator was stopped at the trial's duration and 1% + 100 ms more"

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
