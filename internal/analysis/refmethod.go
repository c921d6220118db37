package analysis

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

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

// PinFellBack is RefMatch.Method where a cell the number rests on ran
// another placement than its workload asked for: a placement name this
// machine could not honour (other-numa on one NUMA node) with
// pin.fallback: mark ran the nearest one, and its samples carry
// MetricPinNotComparable. nic-modes' "numa-other / numa-same = 0.220"
// beside ours from two placements on one node compares nothing.
const PinFellBack = "not comparable: placement fell back (env.json notes)"

// MetricPinNotComparable is 1 in every sample of a variant whose
// placement fell back (the workload package's name for it,
// workload.MetricPinNotComparable, which analysis does not import): a
// flag on the cell, not a measurement.
const MetricPinNotComparable = "pin_not_comparable"

// PinFellBackCells are the cells whose samples carry
// MetricPinNotComparable.
func PinFellBackCells(rows []Row) map[results.Cell]bool {
	out := map[results.Cell]bool{}
	for _, r := range rows {
		if r.Metric == MetricPinNotComparable && r.CPU < 0 && r.N > 0 && r.Mean > 0 {
			out[r.Cell] = true
		}
	}
	return out
}

// windowTotals are the metrics a trial sums over its measured window
// (iperf3's end.sum_sent.retransmits covers -t, the window, not the
// warm-up -O omits): a published total over a 5-minute test set beside
// ours over a 4-second one differs 75-fold with nothing measured
// differently. Only rates per second compare.
var windowTotals = map[string]bool{results.MetricRetransmits: true}

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
// measured otherwise than the published number: the jitter of a load
// pktgen sent, and a total over a window (windowTotals), whose length
// and rate per second Method gives (a study states its paper's test
// length in the reference's note, as the built-in ones do); and, before
// either, a cell whose placement fell back (fellBack, PinFellBackCells),
// the numerator's or the one a ratio divides by.
func markMethods(refs []RefMatch, pktgen map[string]bool, window time.Duration, fellBack map[results.Cell]bool) {
	for i := range refs {
		m := &refs[i]
		switch {
		case m.Reference.Metric == results.MetricJitter && slices.ContainsFunc(m.Rows, func(k Key) bool { return pktgen[k.Workload] }):
			m.Method = PktgenJitter
		case windowTotals[m.Reference.Metric] && m.Reference.Value != nil && len(m.Rows) > 0 && window > 0:
			m.Method = totalMethod(m.MeanLow, m.MeanHigh, window)
		}
		if fellBackRef(m, fellBack) {
			m.Method = strings.TrimSuffix(PinFellBack+"; "+m.Method, "; ")
		}
	}
}

// fellBackRef reports whether a matched row of m, or the row its ratio
// divides by (addRatio's), is of a cell whose placement fell back.
func fellBackRef(m *RefMatch, fellBack map[results.Cell]bool) bool {
	for _, k := range m.Rows {
		den := k.Cell
		den.Datapath = cmp.Or(m.Reference.Against, den.Datapath)
		den.Workload = cmp.Or(m.Reference.AgainstWorkload, den.Workload)
		if fellBack[k.Cell] || m.Reference.Ratio != nil && fellBack[den] {
			return true
		}
	}
	return false
}

// measuredWindow is the part of a trial its workload measures: the
// duration less the warm-up.
func measuredWindow(s *study.Study) time.Duration {
	return s.Spec.Duration.Duration - s.Spec.Warmup.Duration
}

// totalMethod says over how long our totals ran and what they are per
// second: "a total over the test: ours over 4 s, 912.5/s; the paper's
// over its own test".
func totalMethod(low, high float64, window time.Duration) string {
	sec := window.Seconds()
	f := Scale{Factor: 1, Decimals: -1}.Format
	rate := f(low/sec) + "/s"
	if high != low {
		rate = f(low/sec) + " to " + f(high/sec) + "/s"
	}
	return "a total over the test: ours over " + strconv.FormatFloat(sec, 'f', -1, 64) + " s, " + rate + "; the paper's over its own test"
}
