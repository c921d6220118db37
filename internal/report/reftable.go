package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// refTable sets the published numbers beside ours. The references of a
// datapath the run measured nothing of (one the kernel lacks, one --set
// left out, the entry a cluster run did not pick) are not rows: a cluster
// run of flannel-backends would otherwise list the other backend's 75
// numbers as "not measured". leftOut says how many of whose were left out;
// study.yaml keeps them all.
func (n *numbers) refTable() (t table, leftOut string) {
	t = table{Head: []string{"point", "metric", "published", "ours (95% CI)", "note"}}
	measured := map[string]bool{}
	for _, r := range n.Rows {
		measured[r.Datapath] = measured[r.Datapath] || r.N > 0
	}
	var unmeasured []string
	count := map[string]int{}
	for _, ref := range n.References {
		if dp := ref.Reference.Datapath; dp != "" && !measured[dp] {
			if count[dp] == 0 {
				unmeasured = append(unmeasured, dp)
			}
			count[dp]++
			continue
		}
		note := ref.Reference.Note
		if ref.Method != "" {
			note = strings.TrimPrefix(note+"; "+ref.Method, "; ")
		}
		t.Rows = append(t.Rows, []string{refPoint(ref.Reference), ref.Reference.Metric, refValue(ref), n.oursFor(ref), note})
	}
	return t, leftOutLine(unmeasured, count)
}

// leftOutLine says which datapaths' published numbers the reference table
// leaves out, and how many each: "Left out: the 75 published numbers of
// flannel-udp, a datapath this run did not measure (...)".
func leftOutLine(dps []string, count map[string]int) string {
	if len(dps) == 0 {
		return ""
	}
	parts := make([]string, len(dps))
	for i, dp := range dps {
		parts[i] = fmt.Sprintf("%d of %s", count[dp], dp)
	}
	return "Left out of this table: the published numbers of datapaths this run did not measure (" +
		strings.Join(parts, ", ") + "); the run's notes say why where it could not build one, and study.yaml keeps them all."
}

// refPoint describes where a reference applies ("rfs+, 16 replicas, cpu 3").
func refPoint(ref study.Reference) string {
	var parts []string
	if ref.Datapath != "" {
		parts = append(parts, ref.Datapath)
	}
	if ref.Tuning != "" {
		parts = append(parts, ref.Tuning)
	}
	if ref.Workload != "" {
		parts = append(parts, ref.Workload)
	}
	if ref.Impairment != "" {
		parts = append(parts, "impairment "+ref.Impairment)
	}
	if ref.Replicas > 0 {
		parts = append(parts, fmt.Sprintf("%d replica%s", ref.Replicas, plural(ref.Replicas)))
	}
	if ref.CPU != nil {
		parts = append(parts, fmt.Sprintf("cpu %d", *ref.CPU))
	} else if analysis.IsCoreMetric(ref.Metric) {
		parts = append(parts, "every cpu")
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, ", ")
}

// refValue shows a reference's published number(s) in display units.
func refValue(m analysis.RefMatch) string {
	ref := m.Reference
	sc := analysis.Display(ref.Metric)
	var parts []string
	if ref.Normalized != nil {
		parts = append(parts, "normalized "+publishedSpan(analysis.Scale{Factor: 1}, *ref.Normalized, ref.UpTo))
	}
	if ref.Value != nil {
		parts = append(parts, strings.TrimSpace(publishedSpan(sc, *ref.Value, ref.UpTo)+" "+sc.Unit))
	}
	num, den := ref.RatioTerms()
	if ref.Ratio != nil {
		// As the source gave it, as published normalized values are:
		// %.3f cut 1.0793 to 1.079.
		parts = append(parts, fmt.Sprintf("%s / %s = %s", num, den, publishedSpan(analysis.Scale{Factor: 1}, *ref.Ratio, ref.UpTo)))
	}
	if ref.Difference != nil {
		parts = append(parts, strings.TrimSpace(fmt.Sprintf("%s − %s = %s %s", num, den, publishedSpan(sc, *ref.Difference, ref.UpTo), sc.Unit)))
	}
	return strings.Join(parts, ", ")
}

// publishedSpan shows a published number as the source gave it, or the
// range it starts where the reference has an upTo: "14 to 15.5". A
// reference has upTo with one number only (study validation).
func publishedSpan(sc analysis.Scale, v float64, upTo *float64) string {
	if upTo == nil {
		return sc.Published(v)
	}
	return sc.Published(v) + " to " + sc.Published(*upTo)
}

// oursFor shows our number(s) for a reference: the single matching value,
// or the range over several matching rows (a reference without cpu
// matches every core); "not measured" when no row with data matches.
func (n *numbers) oursFor(m analysis.RefMatch) string {
	if len(m.Rows) == 0 {
		if m.Missing != "" {
			return "not measured: this run measured " + m.Missing
		}
		return "not measured"
	}
	var parts []string
	if m.Reference.Normalized != nil {
		switch len(m.NormRows) {
		case 0:
			parts = append(parts, "normalized: no baseline")
		case 1:
			r := n.idx[m.NormRows[0]]
			parts = append(parts, "normalized "+analysis.NormCI(r)+n.nText(r))
		default:
			parts = append(parts, fmt.Sprintf("normalized %.3f to %.3f over %d rows", m.NormLow, m.NormHigh, len(m.NormRows)))
		}
	}
	if r := m.Reference; r.Ratio != nil {
		num, den := r.RatioTerms()
		switch len(m.RatioRows) {
		case 0:
			miss := "ratio: " + den + " not measured"
			if m.RatioMissing != "" {
				miss += ": this run measured " + m.RatioMissing
			}
			parts = append(parts, miss)
		case 1:
			parts = append(parts, fmt.Sprintf("%s / %s = %s", num, den, n.ratioCI(m)))
		default:
			parts = append(parts, fmt.Sprintf("%s / %s = %.3f to %.3f over %d rows", num, den, m.RatioLow, m.RatioHigh, len(m.RatioRows)))
		}
	}
	if m.Reference.Difference != nil {
		parts = append(parts, n.diffText(m))
	}
	if m.Reference.Value != nil {
		sc := analysis.Display(m.Reference.Metric)
		if len(m.Rows) == 1 {
			r := n.idx[m.Rows[0]]
			parts = append(parts, strings.TrimSpace(sc.MeanCI(r)+" "+sc.Unit)+n.nText(r))
		} else {
			parts = append(parts, fmt.Sprintf("%s to %s %s (means of %d rows)", sc.Format(m.MeanLow), sc.Format(m.MeanHigh), sc.Unit, len(m.Rows)))
		}
	}
	return strings.Join(parts, "; ")
}

// ratioCI renders a ratio reference's single ratio with its interval and
// method, or as a bare ratio of means when there is no interval, and the
// trials of both rows: "0.912 [0.850, 0.970] (paired-t, 6 pairs; n=6 and
// 7)". The column is "ours (95% CI)" of cells that may stop at different
// counts, and a paired interval rests on the complete rounds only.
func (n *numbers) ratioCI(m analysis.RefMatch) string {
	k := m.RatioRows[0]
	count := fmt.Sprintf("n=%d and %d", n.idx[k].N, n.idx[m.RatioKey(k)].N)
	c := m.RatioCI
	if c == nil || c.Chosen.Method == stats.MethodNone || math.IsNaN(c.Chosen.Low) {
		return fmt.Sprintf("%.3f (ratio of means, no interval; %s)", m.RatioLow, count)
	}
	u := c.Chosen
	if u.Method == stats.MethodPairedT || u.Method == stats.MethodPairedBootstrap {
		count = fmt.Sprintf("%d pairs; %s", c.Paired.N, count)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] (%s, %s)", u.Ratio, u.Low, u.High, u.Method, count)
}

// diffText is our side of a difference reference: the one difference of
// means with Welch's interval and both rows' trials, "−1.9 [−2.3, −1.5]
// Gbit/s (Welch, n=5 and 5)", the span over several matched rows (one
// per datapath of a reference that names none), or why there is none.
func (n *numbers) diffText(m analysis.RefMatch) string {
	num, den := m.Reference.RatioTerms()
	sc := analysis.Display(m.Reference.Metric)
	switch len(m.DiffRows) {
	case 0:
		miss := "difference: " + den + " not measured"
		if m.RatioMissing != "" {
			miss += ": this run measured " + m.RatioMissing
		}
		return miss
	case 1:
		k := m.DiffRows[0]
		count := fmt.Sprintf("n=%d and %d", n.idx[k].N, n.idx[m.RatioKey(k)].N)
		if math.IsNaN(m.DiffCILow) {
			return fmt.Sprintf("%s − %s = %s %s (difference of means, no interval; %s)", num, den, sc.Format(m.DiffLow), sc.Unit, count)
		}
		return fmt.Sprintf("%s − %s = %s [%s, %s] %s (Welch, %s)", num, den, sc.Format(m.DiffLow), sc.Format(m.DiffCILow), sc.Format(m.DiffCIHigh), sc.Unit, count)
	}
	return fmt.Sprintf("%s − %s = %s to %s %s over %d rows", num, den, sc.Format(m.DiffLow), sc.Format(m.DiffHigh), sc.Unit, len(m.DiffRows))
}

// inlineMethodNote is methodNote for a number inside a table cell: a
// note longer than inlineMethodMax (how Table III's counts were counted,
// some 400 characters) is named there and given whole once, in the
// references table, rather than in every cell of every datapath.
func inlineMethodNote(method string) string {
	if len(method) > inlineMethodMax {
		return " (how ours were measured: \"Published reference numbers\")"
	}
	return methodNote(method)
}

// inlineMethodMax is the longest method note a table cell shows whole.
const inlineMethodMax = 120

// methodNote is " (HOW)" where our number for a published one was
// measured otherwise (analysis.RefMatch.Method).
func methodNote(method string) string {
	if method == "" {
		return ""
	}
	return " (" + method + ")"
}
