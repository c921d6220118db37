package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/ceiling"
)

func mark(pass bool) string {
	if pass {
		return "✓"
	}
	return "✗"
}

// verdictTable lays the model's verdicts out as the seed-003 paper's
// Table IX: a row per datapath and workload variant, a column per
// impairment; each cell is our verdict, the paper's beside it, and "≠"
// where they disagree. A run with several tunings or replica counts
// judges each of them: they get a row each, and their own column when
// they vary, so one cell's failure is never hidden under another's pass.
func verdictTable(m analysis.Model) table {
	if len(m.Verdicts) == 0 {
		return table{}
	}
	byTuning, byReplicas := verdictAxes(m.Verdicts)
	var cols []string
	colIdx := map[string]int{}
	type rk struct {
		dp, tuning, wl string
		replicas       int
	}
	var rows []rk
	rowIdx := map[rk]int{}
	key := func(v analysis.Verdict) rk { return rk{v.Datapath, v.Tuning, v.Workload, v.Replicas} }
	for _, v := range m.Verdicts {
		if _, ok := colIdx[v.Impairment]; !ok {
			colIdx[v.Impairment] = len(cols)
			cols = append(cols, v.Impairment)
		}
		if _, ok := rowIdx[key(v)]; !ok {
			rowIdx[key(v)] = len(rows)
			rows = append(rows, key(v))
		}
	}
	t := table{Head: []string{"datapath"}}
	if byTuning {
		t.Head = append(t.Head, "tuning")
	}
	t.Head = append(t.Head, "workload")
	if byReplicas {
		t.Head = append(t.Head, "replicas")
	}
	first := len(t.Head)
	for _, c := range cols {
		if c == "" {
			c = "none"
		}
		t.Head = append(t.Head, c)
	}
	t.Rows = make([][]string, len(rows))
	for i, k := range rows {
		r := []string{k.dp}
		if byTuning {
			r = append(r, k.tuning)
		}
		r = append(r, k.wl)
		if byReplicas {
			r = append(r, fmt.Sprint(k.replicas))
		}
		t.Rows[i] = append(r, make([]string, len(cols))...)
	}
	for _, v := range m.Verdicts {
		cell := mark(v.Pass)
		if v.SentShare > 0 {
			// Under ceiling.BehindShare by the verdict's reckoning: 0.966
			// is "96.6%", not "97%", the share it fell short of.
			cell += " (sent " + pctApart(v.SentShare, ceiling.BehindShare, 0) + "%)"
		}
		if v.Paper != nil {
			cell += " (paper " + mark(*v.Paper) + ")"
			if v.Disagree {
				cell += " ≠"
			}
		}
		t.Rows[rowIdx[key(v)]][first+colIdx[v.Impairment]] = cell
	}
	return t
}

// verdictAxes reports whether the verdicts span more than one tuning and
// more than one replica count: only then do those need a column.
func verdictAxes(vs []analysis.Verdict) (byTuning, byReplicas bool) {
	for _, v := range vs[1:] {
		byTuning = byTuning || v.Tuning != vs[0].Tuning
		byReplicas = byReplicas || v.Replicas != vs[0].Replicas
	}
	return byTuning, byReplicas
}

// verdictCaption says what the verdicts were judged by.
func verdictCaption(m analysis.Model, s *study.Study) string {
	per := "datapath, workload"
	if len(m.Verdicts) > 0 {
		byTuning, byReplicas := verdictAxes(m.Verdicts)
		if byTuning {
			per += ", tuning"
		}
		if byReplicas {
			per += ", replica count"
		}
	}
	return "Verdict per " + per + " and impairment by the study's criteria (" + m.VerdictCriteria +
		"); \"paper\" is the published verdict" + seed003Note(s, " (Table IX)") + ", ≠ marks a disagreement" + variantNote(s) + ". \"sent N%\": the UDP sender sent only N% of the offered rate, " +
		"so the bitrate criterion was not judged and a pass is not set against the paper's failure. summary.json has why each cell failed."
}

// variantNote explains the rows without "(paper …)" when a published
// verdict names a workload variant: the paper judged that variant, so
// its verdict stands beside that variant's cells only (analysis
// withPaper), and the study's other variants get ours alone.
func variantNote(s *study.Study) string {
	if s == nil || s.Spec.Verdict == nil {
		return ""
	}
	for _, p := range s.Spec.Verdict.Published {
		if p.Workload != "" {
			return "; a published verdict that names a workload variant stands beside that variant's cells only, so a row without \"(paper …)\" has no published verdict"
		}
	}
	return ""
}

// boundTable sets the Ethernet bound of each saturated UDP cell's
// encapsulation beside its measured receiver bitrate (mean [95% CI] of
// the cell's row), in the model's BoundScale.
func boundTable(m analysis.Model) table {
	if len(m.Bounds) == 0 {
		return table{}
	}
	sc, idx := analysis.BoundScale, m.Index()
	t := table{Head: []string{"datapath", "workload", "impairment", "link (Mbit/s)", "encap (B)", "payload (B)",
		"offered (Mbit/s)", "sent (Mbit/s)", "bound (Mbit/s)", "measured (Mbit/s)", "measured / bound"}}
	for _, b := range m.Bounds {
		imp := b.Impairment
		if imp == "" {
			imp = "none"
		}
		sent, share := "as offered", fmt.Sprintf("%.3f", b.Share)
		if b.Sent > 0 {
			sent = sc.Format(b.Sent)
		}
		if !b.Reached() {
			share = "not saturated: sent < bound"
		}
		measured := sc.Format(b.Measured)
		if r, ok := idx[analysis.Key{Cell: b.Cell, Metric: results.MetricBitrate, CPU: -1}]; ok {
			measured = sc.MeanCI(r)
		}
		t.Rows = append(t.Rows, []string{b.Datapath, b.Workload, imp, sc.Format(b.LinkBits), fmt.Sprint(b.Encap), fmt.Sprint(b.Payload),
			sc.Format(b.Offered), sent, sc.Format(b.Bound), measured, share})
	}
	return t
}

var boundCaption = "Saturated UDP cells on the shaped link: the highest receiver bitrate the link carries when each datagram pays " +
	"UDP/IPv4 headers, the datapath's encapsulation and Ethernet framing (header, preamble, FCS, inter-frame gap), beside the measured one " +
	"(mean [95% CI] over trials; measured / bound is of the mean). " +
	fmt.Sprintf("Where the senders fell behind the offered rate (under %.0f%% of it), \"sent\" is what they sent; below the bound the link was not saturated, ", 100*ceiling.BehindShare) +
	"and the bound is not what held the measured bitrate."
