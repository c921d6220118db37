package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// The report's first answer for a study of tunings: each tuning against
// the baseline at each replica count, in a word and a number, before
// the sections that give every interval, n and p. The word is the
// decision that stands for the cell, as the normalized tables show it.

// glanceTables is a tuning × replicas table per datapath and workload
// (and impairment) whose tunings are set against the baseline; with one
// replica count and several datapaths, a datapath × tuning table per
// workload instead (glanceByDatapath).
func (n *numbers) glanceTables(s *study.Study) []table {
	parts := n.glanceParts(s)
	d := Disturbed{analysis.CountedDisturbed(n.Marked), s}
	cell := func(r analysis.Row) string { return n.glanceCell(r, d) }
	if out, ok := n.glanceByDatapath(parts, cell); ok {
		return out
	}
	out := make([]table, len(parts))
	for i, p := range parts {
		out[i] = n.tuningTable(p.g, p.metric, -1, cell)
		out[i].Head[0] = p.g.Name() + ": tuning" + p.note
	}
	return out
}

// glanceParts are the groups the glance shows: those with a tuning set
// against the baseline, without the baseline itself, and not swept.
func (n *numbers) glanceParts(s *study.Study) []glancePart {
	swept := analysis.SweptVariants(s)
	var parts []glancePart
	for _, g := range analysis.Groups(n.Rows) {
		bm := n.normalizedMetric(g)
		m := n.decidedOn(g, bm)
		if swept[g.Workload] || m == "" {
			continue
		}
		// The baseline against itself says nothing at a glance.
		g.Dims.Tunings = slices.DeleteFunc(slices.Clone(g.Dims.Tunings), func(t string) bool { return t == n.Baseline })
		note := ""
		if m != bm {
			better := "higher"
			if stats.DirectionOf(m) == stats.LowerIsBetter {
				better = "lower"
			}
			note = fmt.Sprintf(" (ratio of %s, %s is better)", m, better)
		}
		parts = append(parts, glancePart{g, m, note})
	}
	return parts
}

// glancePart is a group of the glance with the metric its tunings were
// decided on and, when that is not the normalized one, the note its
// table's head gives.
type glancePart struct {
	g      analysis.Group
	metric string
	note   string
}

// glanceByDatapath is, when every part has the same one replica count
// and there are several datapaths, one datapath × tuning table per
// workload (and impairment and metric), in first-seen order: a study of
// datapaths with tunings (cni-compare with rps and rfs) would otherwise
// open with a one-column table per datapath.
func (n *numbers) glanceByDatapath(parts []glancePart, glanceCell func(analysis.Row) string) ([]table, bool) {
	if !byDatapath(parts) {
		return nil, false
	}
	reps := parts[0].g.Dims.Replicas[0]
	// The tables by workload first, each with the tunings of all its
	// datapaths as columns; then a row per datapath.
	type key struct{ workload, impairment, metric, note string }
	idx := map[key]int{}
	var out []table
	for _, p := range parts {
		k := key{p.g.Workload, p.g.Impairment, p.metric, p.note}
		i, ok := idx[k]
		if !ok {
			name := p.g.Workload
			if p.g.Impairment != "" {
				name += " / " + p.g.Impairment
			}
			i, idx[k] = len(out), len(out)
			out = append(out, table{Head: []string{fmt.Sprintf("%s at %d replica%s: datapath%s", name, reps, plural(reps), p.note)}})
		}
		for _, tn := range p.g.Dims.Tunings {
			if !slices.Contains(out[i].Head[1:], tn) {
				out[i].Head = append(out[i].Head, tn)
			}
		}
	}
	for _, p := range parts {
		t := &out[idx[key{p.g.Workload, p.g.Impairment, p.metric, p.note}]]
		row := []string{p.g.Datapath}
		for _, tn := range t.Head[1:] {
			cell := "not run"
			if slices.Contains(p.g.Dims.Tunings, tn) {
				c := results.Cell{Datapath: p.g.Datapath, Tuning: tn, Workload: p.g.Workload, Replicas: reps, Impairment: p.g.Impairment}
				cell = n.absent(c)
				if r, ok := n.row(c, p.metric, -1); ok {
					cell = glanceCell(r)
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return out, true
}

// byDatapath says whether the glance's parts are several datapaths at
// one and the same replica count: a glance by datapath.
func byDatapath(parts []glancePart) bool {
	datapaths := map[string]bool{}
	for _, p := range parts {
		datapaths[p.g.Datapath] = true
		if len(p.g.Dims.Replicas) != 1 || p.g.Dims.Replicas[0] != parts[0].g.Dims.Replicas[0] {
			return false
		}
	}
	return len(datapaths) >= 2
}

// decidedOn is the metric a group's tunings were decided on: the one its
// stops judged (a study's precision target can name a latency) where the
// model compared it with the baseline, else the normalized table's, bm.
func (n *numbers) decidedOn(g analysis.Group, bm string) string {
	for _, st := range n.Stops {
		c := st.Cell
		if c.Tuning == n.Baseline || st.Metric == bm || c.Datapath != g.Datapath || c.Workload != g.Workload || c.Impairment != g.Impairment {
			continue
		}
		if r, ok := n.row(c, st.Metric, -1); ok && r.VsBaseline != nil {
			return st.Metric
		}
	}
	return bm
}

// glanceCell is a normalized cell as "worse ×0.77 (n=3)": the
// controller's decision at its look where it made one, else the
// comparison over all trials at 95%, with the ratio that decision rests
// on and the trials it was judged on, marked where the trials spread
// oddly or some counted though disturbed (dist), the paper's normalized
// value where one matches, and whether its placement fell back.
func (n *numbers) glanceCell(r analysis.Row, dist Disturbed) string {
	if r.N == 0 {
		return "missing" + n.paperNote(r, true)
	}
	return n.glanceVerdictText(r, dist) + n.unchangedNote(r.Tuning) + n.paperNote(r, true) + n.pinNote(r.Cell)
}

// glanceVerdictText is glanceCell's "worse ×0.77 (n=3)".
func (n *numbers) glanceVerdictText(r analysis.Row, dist Disturbed) string {
	v := n.glanceDecision(r)
	out := v.verdict
	if v.have {
		if out != "" {
			out += " "
		}
		out += "×" + strconv.FormatFloat(v.ratio, 'f', 2, 64)
	}
	if out == "" {
		out = "no ratio"
	}
	return out + fmt.Sprintf(" (n=%d%s%s)", v.count, spreadNote(r), disturbedMark(r, dist, n.Stops))
}

// spreadLegend says what spreadNote's marks mean, in the caption of each
// table that puts them on a cell: what is the cell's decision ("its
// word").
func spreadLegend(what string) string {
	return "\"two groups\" and \"wide spread\" mark a cell whose trials fall in two groups, or spread far more than the other cells', " +
		"so that " + what + " rests on trials worth reading (\"Two groups of trials\", \"Trials that spread widely\"). "
}

// disturbedNote is disturbedMark's mark.
const disturbedNote = ", disturbed"

// disturbedLegend says what disturbedMark's mark means.
const disturbedLegend = "\"disturbed\" marks one whose trials, or those it was compared with, include some the noise guard found disturbed " +
	"and counted when its repeats were used up (\"Marked trials\"). "

// disturbedMark marks a cell whose trials, or those of the cell it was
// compared with, include ones counted though disturbed (Disturbed).
func disturbedMark(r analysis.Row, d Disturbed, stops []results.Stop) string {
	if d.note(r.Cell, stops) != "" {
		return disturbedNote
	}
	return ""
}

// spreadNote marks a cell whose trials are not one value with noise
// around it (Row.Groups, Row.Wide): its word and ratio rest on trials
// the reader should see, in the sections that list them.
func spreadNote(r analysis.Row) string {
	switch {
	case r.Groups != nil:
		return ", two groups"
	case r.Wide != nil:
		return ", wide spread"
	}
	return ""
}

// glanceVerdict is the decision that stands for a cell, the ratio and
// interval it rests on (have: a finite ratio) and the trials it was
// judged on.
type glanceVerdict struct {
	verdict          string
	ratio, low, high float64
	have             bool
	count            int
}

// glanceDecision is the controller's decision at its look where it made
// one, else the comparison over all trials at 95%, else the normalized
// value with no decision.
func (n *numbers) glanceDecision(r analysis.Row) glanceVerdict {
	d := glanceVerdict{ratio: r.Normalized, low: r.NormCI95Low, high: r.NormCI95High, have: r.HasNorm, count: r.N}
	if s, ok := n.stops[analysis.Key{Cell: r.Cell, Metric: r.Metric, CPU: r.CPU}]; ok {
		d.verdict = s.Decision
		if s.Ratio != nil && analysis.Finite(*s.Ratio) {
			d.ratio, d.low, d.high, d.have = *s.Ratio, math.NaN(), math.NaN(), true
			if s.Low != nil && s.High != nil {
				d.low, d.high = *s.Low, *s.High
			}
		}
		if s.Look > 0 {
			d.count = s.Look // the trials the decision was judged on
		}
	} else if p := r.VsBaseline; p != nil {
		d.verdict = string(p.Decision.Verdict)
		if analysis.Finite(p.Chosen.Ratio) && p.Chosen.Ratio > 0 {
			d.ratio, d.low, d.high, d.have = p.Chosen.Ratio, p.Chosen.Low, p.Chosen.High, true
		}
	}
	d.have = d.have && analysis.Finite(d.ratio)
	return d
}

// unchangedNote marks a tuning that found every value it sets already in
// place: its cells measure the machine as found under another name.
func (n *numbers) unchangedNote(tuning string) string {
	for _, t := range n.Tunings {
		if t.Name == tuning && results.ChangedNothing(t.Set) {
			return " · changed nothing"
		}
	}
	return ""
}

// glanceCaption says what a glance cell holds and where the rest is.
func glanceCaption(m analysis.Model) string {
	margin := ""
	if m.Margin > 0 {
		margin = fmt.Sprintf(" ±%s", strconv.FormatFloat(100*m.Margin, 'f', -1, 64)) + "%"
	}
	unchanged := ""
	if slices.ContainsFunc(m.Tunings, func(t analysis.TuningDef) bool { return results.ChangedNothing(t.Set) }) {
		unchanged = "\"changed nothing\": the tuning found every value it sets already in place (\"What each tuning set\"), " +
			"so its cells measured the machine as found. "
	}
	disturbed := ""
	if len(analysis.CountedDisturbed(m.Marked)) > 0 {
		disturbed = disturbedLegend
	}
	return "Each tuning against the baseline tuning, " + m.Baseline + ", at the same datapath, workload and replica count: the decision " +
		"(better, worse, equal within" + margin + " of it, or undecided), the ratio it rests on (of bitrates; of transactions or requests per second for request/response and HTTP workloads; of the metric a table's head names where the study decides on another) and the trials it was judged on (n). Where an adaptive run " +
		"decided a cell at one of its looks, that decision stands; otherwise the comparison over all the cell's trials at 95%. " +
		unchanged + spreadLegend("its word") + disturbed +
		"\"paper X\" is the published normalized value for the same point. The sections below give each interval, n and p" + stopsWhy(m.Stops)
}

// stopsWhy ends the glance's caption: where the pages have the
// "Repetitions and decisions" table, that it says why each cell stopped.
func stopsWhy(stops []results.Stop) string {
	if !stopsShown(stops) {
		return "."
	}
	return "; \"Repetitions and decisions\" says why each cell stopped."
}
