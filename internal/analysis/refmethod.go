package analysis

import (
	"slices"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// PktgenJitter is RefMatch.Method for jitter of a load pktgen sent. The
// papers' jitter is iperf3's: its client stamps each datagram in user
// space as it sends it and its server times the datagram as it reads
// it, so both programs' scheduling is in the number. pktgen stamps its
// packets in the kernel as it builds them and cnibench's receiver takes
// the kernel's receive time (docs/workloads.md): the same RFC 3550
// formula over other clocks' readings.
const PktgenJitter = "the paper's timed by iperf3, ours from pktgen's stamps"

// pktgenSent are the workload variants (as cells name them) whose UDP
// load pktgen sends.
func pktgenSent(s *study.Study) map[string]bool {
	out := map[string]bool{}
	for _, v := range s.Variants() {
		if v.UDPSender() == study.SenderPktgen {
			out[v.Name] = true
		}
	}
	return out
}

// markMethods sets Method on the references whose matched rows were
// measured otherwise than the published number: today the jitter of a
// load pktgen sent.
func markMethods(refs []RefMatch, pktgen map[string]bool) {
	for i := range refs {
		m := &refs[i]
		if m.Reference.Metric == results.MetricJitter && slices.ContainsFunc(m.Rows, func(k Key) bool { return pktgen[k.Workload] }) {
			m.Method = PktgenJitter
		}
	}
}
