package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
)

// SenderBehind is a UDP cell whose senders, on average over its trials,
// sent less than ceiling.BehindShare of the offered rate (sentRate): its
// bitrate and loss are of what was sent, not of the offered load.
type SenderBehind struct {
	results.Cell
	// Offered and Sent are the cell's mean offered and sent rates, bit/s.
	Offered, Sent float64
}

// SenderBehindCells lists the UDP cells of rows (Summarize's) whose
// senders fell behind. The run warns as trials fall behind; this names
// the cells at its end. TCP cells are left out: a TCP sender below a -b
// cap was held by the path's congestion control, which is the
// measurement, not a short sender.
func SenderBehindCells(s *study.Study, rows []Row) []SenderBehind {
	idx := Index(rows)
	var out []SenderBehind
	for _, r := range rows {
		if r.Metric != iperf3.MetricOffered || r.CPU >= 0 || r.N == 0 || !(r.Mean > 0) {
			continue
		}
		if w, ok := variant(s, r.Workload); !ok || w.Protocol != "udp" {
			continue
		}
		if sent, behind := sentRate(idx, r.Cell, r.Mean); behind {
			out = append(out, SenderBehind{Cell: r.Cell, Offered: r.Mean, Sent: sent})
		}
	}
	return out
}
