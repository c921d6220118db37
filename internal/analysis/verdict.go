package analysis

import (
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
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
					judged = true
					if r.Mean < *p*off {
						fail(fmtf("bitrate %.3g of offered < %g", r.Mean/off, *p))
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
		for _, pv := range v.Published {
			if pv.Datapath == r.Datapath && pv.Protocol == w.Protocol && refImpairment(pv.Impairment, r.Impairment) {
				pass := pv.Pass
				vd.Paper = &pass
				vd.Disagree = pass != vd.Pass
				break
			}
		}
		out = append(out, vd)
	}
	return out
}
