package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/markdown"
	"github.com/cnibench/cnibench/internal/results"
)

// table is what both renderers show: report.html through its "table"
// template, summary.md through markdown. Every table of either is built
// once, here or beside its figures, from the summary model.
type table struct {
	Head []string
	Rows [][]string
}

// markdown writes t as a Markdown table followed by a blank line.
func (t table) markdown(w io.Writer) {
	if len(t.Head) == 0 {
		return
	}
	line := func(cells []string) {
		fmt.Fprint(w, "|")
		for _, c := range cells {
			fmt.Fprintf(w, " %s |", markdown.Cell(c))
		}
		fmt.Fprint(w, "\n")
	}
	line(t.Head)
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(t.Head)))
	for _, r := range t.Rows {
		line(r)
	}
	fmt.Fprint(w, "\n")
}

// numbers is the summary model with its rows indexed: what the tables
// and figures look numbers up in.
type numbers struct {
	analysis.Model
	idx map[analysis.Key]analysis.Row
	// stops are the controller's decisions by cell and metric.
	stops map[analysis.Key]results.Stop
	// planned are the cells the run planned (those with a stop); empty
	// for a run without stops.json.
	planned map[results.Cell]bool
	// fellBack are the cells whose placement fell back (pinNote).
	fellBack map[results.Cell]bool
	// tunings orders the tunings' colours in figures (tuningIndex).
	tunings []string
}

func newNumbers(m analysis.Model) *numbers {
	n := &numbers{Model: m, idx: m.Index(), stops: analysis.Decisions(m.Stops, m.Trials()), planned: map[results.Cell]bool{},
		fellBack: analysis.PinFellBackCells(m.Rows), tunings: tuningOrder(nil, analysis.DimsOf(m.Rows).Tunings)}
	for _, st := range m.Stops {
		n.planned[st.Cell] = true
	}
	return n
}

// notRun reports whether the run did not plan cell c: a study with
// spec.only runs part of its lists' product. A run without stops.json
// says nothing of its plan.
func (n *numbers) notRun(c results.Cell) bool { return len(n.planned) > 0 && !n.planned[c] }

// absent is what a table shows for a cell without the row it wants: "not
// run" where the run did not plan the cell, else "missing" (planned, no
// value).
func (n *numbers) absent(c results.Cell) string {
	if n.notRun(c) {
		return "not run"
	}
	return "missing"
}

// row returns the row of a cell's metric (cpu -1: not per core).
func (n *numbers) row(c results.Cell, metric string, cpu int) (analysis.Row, bool) {
	r, ok := n.idx[analysis.Key{Cell: c, Metric: metric, CPU: cpu}]
	return r, ok
}

// refs returns the published references that match a row.
func (n *numbers) refs(r analysis.Row) []analysis.RefMatch {
	var out []analysis.RefMatch
	for _, i := range r.Refs {
		if i >= 0 && i < len(n.References) {
			out = append(out, n.References[i])
		}
	}
	return out
}

// nText marks a cell with fewer or more trials than planned (a cell of
// one trial says so already: "2.105 (n=1, no CI)").
func (n *numbers) nText(r analysis.Row) string {
	if n.TrialsPlanned > 0 && r.N > 1 && r.N != n.TrialsPlanned {
		return fmt.Sprintf(" (n=%d)", r.N)
	}
	return ""
}

// paperNote is the inline note for a table cell: " · paper X" with the
// published normalized value (normalized tables) or the published value
// in display units (absolute tables), " · paper X to Y" where the paper
// gave a range; "" when no reference matches.
func (n *numbers) paperNote(r analysis.Row, normalized bool) string {
	var out []string
	for _, ref := range n.refs(r) {
		switch {
		case normalized && ref.Reference.Normalized != nil:
			out = append(out, ref.Label+" "+publishedSpan(analysis.Scale{Factor: 1}, *ref.Reference.Normalized, ref.Reference.UpTo))
		case !normalized && ref.Reference.Value != nil:
			out = append(out, ref.Label+" "+publishedSpan(analysis.Display(r.Metric), *ref.Reference.Value, ref.Reference.UpTo)+inlineMethodNote(ref.Method))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " · " + strings.Join(out, ", ")
}

// pinNote marks a cell whose placement fell back where its numbers meet
// others' (the glance, the datapath tables): " · not comparable:
// placement fell back (env.json notes)".
func (n *numbers) pinNote(c results.Cell) string {
	if n.fellBack[c] {
		return " · " + analysis.PinFellBack
	}
	return ""
}

// tuningTable is a tuning × replicas table of one group's cells.
func (n *numbers) tuningTable(g analysis.Group, metric string, cpu int, cell func(analysis.Row) string) table {
	t := table{Head: []string{"tuning"}}
	for _, r := range g.Dims.Replicas {
		t.Head = append(t.Head, fmt.Sprintf("%d replica%s", r, plural(r)))
	}
	for _, tn := range g.Dims.Tunings {
		row := []string{tn}
		for _, reps := range g.Dims.Replicas {
			c := results.Cell{Datapath: g.Datapath, Tuning: tn, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}
			r, ok := n.row(c, metric, cpu)
			if !ok {
				row = append(row, n.absent(c))
				continue
			}
			row = append(row, cell(r))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// metricTable is a metric × replicas table of a group with one tuning.
func (n *numbers) metricTable(g analysis.Group, metrics []string) table {
	t := table{Head: []string{"metric (unit)"}}
	for _, r := range g.Dims.Replicas {
		t.Head = append(t.Head, fmt.Sprintf("%d replica%s", r, plural(r)))
	}
	for _, metric := range metrics {
		row := []string{analysis.Labeled(metric)}
		for _, reps := range g.Dims.Replicas {
			c := results.Cell{Datapath: g.Datapath, Tuning: g.Dims.Tunings[0], Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}
			r, ok := n.row(c, metric, -1)
			if !ok {
				row = append(row, n.absent(c))
				continue
			}
			row = append(row, n.absCell(r))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// tuningColumns is a metric × tuning table of a group measured at one
// replica count: the rows a tuning × replicas table per metric would give
// one line each, in a screen. norm, when not "", is the normalized metric,
// whose row comes first. A pod metric that every tuning measured on the
// same pods is shown once, in the first tuning's column.
func (n *numbers) tuningColumns(g analysis.Group, norm string, metrics []string) table {
	reps := g.Dims.Replicas[0]
	t := table{Head: []string{fmt.Sprintf("metric (unit), %d replica%s", reps, plural(reps))}}
	t.Head = append(t.Head, g.Dims.Tunings...)
	add := func(label, metric string, cell func(analysis.Row) string) {
		row := []string{label}
		for _, tn := range g.Dims.Tunings {
			c := results.Cell{Datapath: g.Datapath, Tuning: tn, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}
			r, ok := n.row(c, metric, -1)
			if !ok {
				row = append(row, n.absent(c))
				continue
			}
			row = append(row, cell(r))
		}
		t.Rows = append(t.Rows, row)
	}
	if norm != "" {
		add(fmt.Sprintf("normalized %s (vs %s)", norm, n.Baseline), norm, n.normCell)
	}
	for _, metric := range metrics {
		label := analysis.Labeled(metric)
		if !slices.Contains(analysis.PodMetrics, metric) {
			add(label, metric, n.absCell)
			continue
		}
		if most, ok := n.samePods(g, metric, reps); ok {
			row := []string{label, n.absCell(most)}
			for range g.Dims.Tunings[1:] {
				row = append(row, "the same pods")
			}
			t.Rows = append(t.Rows, row)
			continue
		}
		add(label, metric, n.absCell)
	}
	return t
}

// coreTable is a (tuning, replicas) × cpu table of a per-core metric;
// without the replicas column where the group has one count (the tables
// above it name it).
func (n *numbers) coreTable(g analysis.Group, metric string) table {
	oneCount := len(g.Dims.Replicas) == 1
	t := table{Head: []string{"tuning", "replicas"}}
	if oneCount {
		t.Head = t.Head[:1]
	}
	cpus := g.CPUsOf(metric)
	for _, cpu := range cpus {
		t.Head = append(t.Head, fmt.Sprintf("cpu %d", cpu))
	}
	sc := analysis.Display(metric)
	for _, reps := range g.Dims.Replicas {
		for _, tn := range g.Dims.Tunings {
			c := results.Cell{Datapath: g.Datapath, Tuning: tn, Workload: g.Workload, Replicas: reps, Impairment: g.Impairment}
			if n.notRun(c) {
				continue // a row of "not run" per core says nothing
			}
			row := []string{tn, strconv.Itoa(reps)}
			if oneCount {
				row = row[:1]
			}
			for _, cpu := range cpus {
				r, ok := n.row(c, metric, cpu)
				cell := "missing"
				if ok {
					cell = sc.MeanCI(r) + n.paperNote(r, false)
				}
				row = append(row, cell)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// sweepTable is a sweep's table: one row per swept value (and tuning and
// replica count when the study varies those), mean [95% CI] of each
// headline metric.
func (n *numbers) sweepTable(sw analysis.SweepSummary) table {
	if len(sw.Points) == 0 {
		return table{}
	}
	t := table{Head: []string{sw.Param}}
	if sw.PerTuning {
		t.Head = append(t.Head, "tuning", "replicas")
	}
	for _, m := range sw.Metrics {
		t.Head = append(t.Head, analysis.Labeled(m))
	}
	for _, pt := range sw.Points {
		row := []string{pt.Value}
		if sw.PerTuning {
			row = append(row, pt.Cell.Tuning, strconv.Itoa(pt.Cell.Replicas))
		}
		for _, m := range sw.Metrics {
			r, ok := n.row(pt.Cell, m, -1)
			if !ok {
				row = append(row, n.absent(pt.Cell))
				continue
			}
			row = append(row, analysis.Display(m).MeanCI(r))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func sweepTitle(sw analysis.SweepSummary) string {
	if sw.Impairment != "" {
		return fmt.Sprintf("%s / %s / impairment %s: %s sweep", sw.Datapath, sw.Workload, sw.Impairment, sw.Param)
	}
	return fmt.Sprintf("%s / %s: %s sweep", sw.Datapath, sw.Workload, sw.Param)
}

// sweepCaption says what the sweep's table holds: mean [95% CI] over
// trials where some cell has an interval, else what its cells show
// instead (sweepShown).
func (n *numbers) sweepCaption(sw analysis.SweepSummary) string {
	if len(sw.Points) == 0 {
		return "No samples for any value of this sweep."
	}
	where := fmt.Sprintf("at tuning %s and %d replica%s", sw.Tuning, sw.Replicas, plural(sw.Replicas))
	if sw.PerTuning {
		where = "per tuning and replica count"
	}
	return fmt.Sprintf("One row per value of %s %s: %s. "+
		"Each value is its own cell (%s@VALUE) in summary.csv.", sw.Param, where, n.sweepShown(sw), sw.Workload)
}

// sweepShown is what a sweep table's cells hold (shownOf).
func (n *numbers) sweepShown(sw analysis.SweepSummary) string {
	var rows []analysis.Row
	for _, pt := range sw.Points {
		for _, m := range sw.Metrics {
			if r, ok := n.row(pt.Cell, m, -1); ok {
				rows = append(rows, r)
			}
		}
	}
	return shownOf(rows)
}

// shownOf is what a table of these rows shows in its cells: "mean [95% CI]
// over trials" when one of them has an interval; in a run of one trial per
// cell, where each says "n=1, no CI", the trial's value.
func shownOf(rows []analysis.Row) string {
	single := true
	for _, r := range rows {
		if analysis.RowHasInterval(r) {
			return "mean [95% CI] over trials"
		}
		single = single && r.N < 2
	}
	if single {
		return "the value of its single trial, which has no interval (n=1, no CI)"
	}
	return "mean over trials, none with an interval (a single trial, or the same value in every trial)"
}

// rowsTable is every summary row in display units, as summary.csv has
// them.
func rowsTable(rows []analysis.Row) table {
	t := table{Head: []string{"datapath", "tuning", "workload", "replicas", "metric", "cpu", "n", "mean [95% CI]", "sd", "unit",
		"normalized [95% CI]", "p vs baseline", "p vs first datapath"}}
	for _, r := range rows {
		sc := analysis.Display(r.Metric)
		cpu, norm := "", ""
		if r.CPU >= 0 {
			cpu = strconv.Itoa(r.CPU)
		}
		if r.HasNorm {
			norm = analysis.NormCI(r)
		}
		t.Rows = append(t.Rows, []string{
			r.Datapath, r.Tuning, r.Workload + impairmentSuffix(r.Impairment), strconv.Itoa(r.Replicas), r.Metric, cpu, strconv.Itoa(r.N),
			sc.MeanCI(r), sc.Format(r.SD), sc.Unit, norm, pText(r.PBaseline), pText(r.PFirstDatapath),
		})
	}
	return t
}

// pText is a p value as a table column shows it ("0.042", "<0.001").
func pText(p float64) string { return strings.TrimPrefix(analysis.FormatP(p), "=") }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
