package analysis

import (
	"math"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
)

// Verdict is one cell of the verdict table (the seed-003 paper's Table
// IX): whether a datapath, workload variant and impairment met the
// study's criteria (spec.verdict), with the numbers it was judged on and
// a published verdict beside it.
type Verdict struct {
	results.Cell
	Protocol string `json:"protocol"`
	Pass     bool   `json:"pass"`
	// Why says which criterion failed, or what held.
	Why string `json:"why"`
	// Paper is the published verdict for the datapath, protocol and
	// impairment, nil when there is none; Disagree marks a difference.
	Paper    *bool `json:"paper,omitempty"`
	Disagree bool  `json:"disagree,omitempty"`
	// SentShare is what the UDP sender sent over the offered rate where it
	// fell behind it (sentRate): the bitrate criterion was then not
	// judged (the load it is about was never offered), and a pass is not
	// set against a published failure.
	SentShare float64 `json:"sent_share,omitempty"`
}

// sentRate is the mean rate a UDP cell's senders say they sent (pktgen's
// sent_bps, iperf3's sender_bitrate) and whether that fell behind the
// offered rate off: under ceiling.BehindShare of it, as the run warned.
// On 2 cores an iperf3 client asked for 1500 Mbit/s across flannel-vxlan
// sent about 450: its core also ran the path's softirq work.
func sentRate(idx map[Key]Row, c results.Cell, off float64) (sent float64, behind bool) {
	for _, m := range []string{iperf3.MetricSent, iperf3.MetricSenderBitrate} {
		if r, ok := idx[Key{Cell: c, Metric: m, CPU: -1}]; ok && r.N > 0 {
			return r.Mean, ceiling.Behind(r.Mean, off)
		}
	}
	return 0, false
}

// verdicts judges every bitrate row of the study's cells by spec.verdict.
// A cell without the numbers a criterion needs gets no verdict.
func verdicts(s *study.Study, rows []Row) []Verdict {
	v := s.Spec.Verdict
	if v == nil {
		return nil
	}
	idx := Index(rows)
	get := func(c results.Cell, metric string) (float64, bool) {
		r, ok := idx[Key{Cell: c, Metric: metric, CPU: -1}]
		return r.Mean, ok && r.N > 0
	}
	var out []Verdict
	for _, r := range rows {
		if r.Metric != results.MetricBitrate || r.CPU >= 0 || r.N == 0 {
			continue
		}
		w, ok := variant(s, r.Workload)
		if !ok {
			continue
		}
		vd := Verdict{Cell: r.Cell, Protocol: w.Protocol, Pass: true}
		judged := false
		fail := func(why string) {
			if vd.Pass {
				vd.Pass, vd.Why = false, why
			}
		}
		switch w.Protocol {
		case "udp":
			if p := v.UDP.MaxLossPct; p != nil {
				if lost, ok := get(r.Cell, "lost_percent"); ok {
					judged = true
					if lost > *p {
						fail(fmtf("lost %.3g%% > %g%%", lost, *p))
					}
				}
			}
			if p := v.UDP.MinBitrateOfOffered; p != nil {
				if off, ok := get(r.Cell, "offered_bps"); ok && off > 0 {
					if sent, behind := sentRate(idx, r.Cell, off); behind {
						vd.SentShare = sent / off
					} else {
						judged = true
						if r.Mean < *p*off {
							fail(fmtf("bitrate %.3g of offered < %g", r.Mean/off, *p))
						}
					}
				}
			}
		case "tcp":
			if p := v.TCP.MinGoodputOfUnimpaired; p != nil {
				base := r.Cell
				base.Impairment = ""
				if b, ok := get(base, results.MetricBitrate); ok && b > 0 {
					judged = true
					if r.Mean < *p*b {
						fail(fmtf("goodput %.3g of unimpaired < %g", r.Mean/b, *p))
					}
				}
			}
		}
		if !judged {
			continue
		}
		if vd.Pass {
			vd.Why = "every criterion met"
		}
		if vd.SentShare > 0 {
			vd.Why += "; bitrate of offered not judged: the sender sent " + sentShareText(vd.SentShare) + " of the offered rate"
		}
		withPaper(&vd, v.Published)
		out = append(out, vd)
	}
	return out
}

// withPaper sets the published verdict for vd's datapath, protocol and
// impairment beside it, and whether they disagree: a pass whose sender
// fell behind was not judged on the load the paper's failure is about.
func withPaper(vd *Verdict, published []study.PublishedVerdict) {
	for _, pv := range published {
		if pv.Datapath == vd.Datapath && pv.Protocol == vd.Protocol && refWorkload(pv.Workload, vd.Workload) &&
			refImpairment(pv.Impairment, vd.Impairment) {
			pass := pv.Pass
			vd.Paper = &pass
			vd.Disagree = pass != vd.Pass && !(vd.Pass && vd.SentShare > 0)
			return
		}
	}
}

// sentShareText is a sender's share of the offered rate in percent,
// floored to 0.1%: a share just under ceiling.BehindShare must not print
// as the threshold itself (0.9699 as "97%").
func sentShareText(share float64) string {
	return fmtf("%.1f%%", math.Floor(share*1000)/10)
}
