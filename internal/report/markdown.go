package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/markdown"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// markdownCoreMetrics are the per-core metrics summary.md tabulates (the
// paper's figures, and the same of a cluster's client node); the others
// are in summary.csv.
var markdownCoreMetrics = []string{results.MetricCoreIdle, results.MetricCorePoll, results.MetricCoreSoftIRQ,
	analysis.ClientCore(results.MetricCoreIdle), analysis.ClientCore(results.MetricCorePoll), analysis.ClientCore(results.MetricCoreSoftIRQ)}

// pollNone stands for a core_poll table or figure of zeros.
const pollNone = "0 on every core in every trial: no core spun in cpuidle's polling state (the kernel would count it as idle). " +
	"A cpuIdle tuning that keeps cores out of deeper states turns idle time into polling."

// pollNote says how to read core_poll: the kernel counts polling as
// idle, so it is a busy part of core_idle.
const pollNote = "core_poll is the part of core_idle the core spent spinning in cpuidle's polling state (sysfs " +
	"cpuN/cpuidle/state0/time): the kernel counts it as idle time, though the core was busy all of it. A cpuIdle " +
	"tuning that keeps cores out of deeper states turns idle time into polling."

// writeMarkdown writes summary.md from the model: per datapath and
// workload, normalized and absolute tables (tuning × replicas) and
// per-core tables; per datapath and swept workload, one table with a row
// per swept value; and the study's published reference numbers beside
// ours. run gives the warnings loading it tolerated and the engine's
// cluster line; s and run may be nil.
func writeMarkdown(w io.Writer, s *study.Study, m analysis.Model, run *results.Run) error {
	bw := bufio.NewWriter(w)
	n := newNumbers(m)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	n.markdownHeader(p, s, run)
	markdownGaps(p, s, m, run)
	if tables := n.glanceTables(s); len(tables) > 0 {
		p("## At a glance\n\n")
		for _, t := range tables {
			t.markdown(bw)
		}
		p("%s\n\n", markdown.Text(glanceCaption(m)))
	}
	if t := tuningsTable(s, m); len(t.Rows) > 0 {
		p("## What each tuning set\n\n")
		t.markdown(bw)
		p("%s\n\n", tuningsCaption)
	}
	if lines := impairmentsApplied(runEnv(run), s); len(lines) > 0 {
		p("## Impairments\n\n%s\n\n", markdown.Text(impairmentsAppliedCaption))
		for _, l := range lines {
			p("- %s\n", markdown.Text(l))
		}
		p("\n")
	}
	if tables := datapathTables(s, m); len(tables) > 0 {
		p("## Datapaths side by side\n\n%s\n\n", datapathCaption(s, m))
		for _, t := range tables {
			t.markdown(bw)
		}
	}
	// A swept workload's variants get one section per datapath with a
	// row per swept value (as in report.html), not a section each: a
	// concurrency sweep of 8 values made 8 sections. Their per-core
	// numbers stay in summary.csv.
	swept := analysis.SweptVariants(s)
	for _, g := range analysis.Groups(m.Rows) {
		if !swept[g.Workload] {
			n.markdownGroup(bw, g)
		}
	}
	for _, sw := range m.Sweeps {
		p("## %s\n\n", markdown.Text(sweepTitle(sw)))
		n.sweepTable(sw).markdown(bw)
		p("%s\n\n", markdown.Text(n.sweepCaption(sw)))
	}
	for _, sec := range closingSections(m, s, guardOf(run)) {
		if len(sec.Table.Rows) > 0 {
			p("## %s\n\n", sec.Title)
			sec.Table.markdown(bw)
			// A caption names the run's cells, tunings and datapaths.
			p("%s\n\n", markdown.Text(sec.Caption))
		}
	}
	n.markdownRefs(bw, s, run)
	if run != nil && s != nil {
		// What of the run can be set beside the published numbers, as
		// report.html says it: summary.md is read alone too.
		p("## %s\n\n", comparabilityHeading(s))
		for _, l := range comparability(run, s) {
			p("%s\n\n", markdown.Text(l))
		}
	}
	return bw.Flush()
}

// refsHeading names the published numbers' source, where the study
// gives one: "Published reference numbers — seed 003 (paper)".
func refsHeading(s *study.Study) string {
	if s == nil || s.Metadata.Source == "" {
		return "Published reference numbers"
	}
	return "Published reference numbers — " + s.Metadata.Source
}

// markdownRefs is summary.md's section of the published numbers beside
// ours, and of those left out.
func (n *numbers) markdownRefs(w io.Writer, s *study.Study, run *results.Run) {
	mislabel := ""
	if run != nil && s != nil {
		mislabel = mislabelledLeftOut(run.Env, s)
	}
	if len(n.References) == 0 && mislabel == "" {
		return
	}
	fmt.Fprintf(w, "## %s\n\n", markdown.Text(refsHeading(s)))
	t, leftOut := n.refTable()
	if len(t.Rows) > 0 {
		t.markdown(w)
	}
	if l := strings.TrimSpace(leftOut + " " + mislabel); l != "" {
		fmt.Fprintf(w, "%s\n\n", markdown.Text(l))
	}
}

// section is one of the closing sections of summary.md and report.html:
// a title, its table and the caption under it, written when the table
// has rows.
type section struct {
	Title, Caption string
	Table          table
}

// closingSections are the sections after the cells' own: how the run
// repeated and decided, and what to know in reading its cells (g: what
// the noise guard could read on the run's nodes).
func closingSections(m analysis.Model, s *study.Study, g guardView) []section {
	return []section{
		{"Repetitions and decisions", stopsText(m, s), stopsTable(m, s)},
		{"Two groups of trials", groupsCaption, groupsTable(m)},
		{"Trials that spread widely", wideCaption, wideTable(m)},
		{"Bound by one core", oneCoreText(m, s), oneCoreTable(m)},
		{"Marked trials", g.caption(), markedTable(m, g)},
		{"Verdicts", verdictCaption(m, s), verdictTable(m)},
		{"Ethernet bound of the encapsulation", boundCaption, boundTable(m)},
	}
}

// markdownHeader is summary.md's title, what was measured (a cluster
// run's CNI beside the datapath names its cells carry, as report.html's
// header says) and the paragraph saying how to read its numbers.
func (n *numbers) markdownHeader(p func(string, ...any), s *study.Study, run *results.Run) {
	m := n.Model
	p("# %s: summary\n\n", markdown.Text(m.Study))
	if s != nil && s.Metadata.Description != "" {
		p("%s.\n\n", markdown.Text(strings.TrimSuffix(s.Metadata.Description, ".")))
	}
	if s != nil && s.Metadata.Source != "" {
		p("Source: %s.\n\n", markdown.Text(strings.TrimSuffix(s.Metadata.Source, ".")))
	}
	if run != nil && s != nil {
		if l := clusterLine(run.Env, s); l != "" {
			p("%s\n\n", markdown.Text(l))
		}
		if l := guardOf(run).line(); l != "" {
			p("%s\n\n", markdown.Text(l))
		}
	}
	if m.TrialsPlanned == 1 {
		p("Values of one trial per cell (the study's count): no confidence intervals, and no decisions.")
	} else {
		p("Means over trials (%s) with 95%% Student t confidence intervals in brackets.", trialsText(m.TrialsMin, m.TrialsPlanned))
	}
	if tuningsBesides(analysis.DimsOf(m.Rows).Tunings, m.Baseline) {
		p(" Normalized bitrate (transactions or requests per second for request/response and HTTP workloads) = mean / mean of the baseline tuning %s at the same datapath, workload and replica count;"+
			" its 95%% interval is Fieller's, and p is Welch's two-sided t test against %s, not corrected for multiple comparisons"+
			" (see docs/statistics.md). A tuning's latency (mean, median, 99th percentile), CPU cost per packet and the metric the study"+
			" decides on, if another, also give their ratio to the baseline's (×; lower is better for a latency or a cost) with its 95%% interval,"+
			" paired by round where it can be, and the decision at the margin over all the cell's trials, after the decision at a look where the run made one.",
			markdown.Code(m.Baseline), markdown.Code(m.Baseline))
		if len(n.stops) > 0 {
			p(" %s", normNote)
		}
	}
	p(" Bitrates in Gbit/s and sizes in MiB, message and segment sizes in bytes (summary.csv keeps bit/s and bytes). \"paper X\" is a published number for the same point;" +
		" \"(n=K)\" marks a cell with fewer or more trials than planned.\n\n")
}

func trialsText(lo, trials int) string {
	switch {
	case trials <= 0:
		return "n per cell as measured"
	case lo > 0 && lo < trials:
		return fmt.Sprintf("%d to %d per cell, adaptive: (n=K) gives each cell's count", lo, trials)
	}
	return strconv.Itoa(trials) + " per cell planned"
}

// markdownGroup is a group's section of summary.md. The names in its
// headings are study.yaml's, which reaches a report unvalidated
// (decodeStudy): markdown.Text, as free text.
func (n *numbers) markdownGroup(w io.Writer, g analysis.Group) {
	fmt.Fprintf(w, "## %s\n\n", markdown.Text(g.Name()))
	if !slices.ContainsFunc(g.Rows, func(r analysis.Row) bool { return r.N > 0 }) {
		fmt.Fprintf(w, "No samples: every cell of it is listed under \"Cells without samples\".\n\n")
		return
	}
	bm := n.normalizedMetric(g)
	oneCount := len(g.Dims.Tunings) > 1 && len(g.Dims.Replicas) == 1
	if bm != "" && !oneCount {
		fmt.Fprintf(w, "### Normalized %s (vs %s)\n\n", bm, markdown.Text(n.Baseline))
		n.tuningTable(g, bm, -1, n.normCell).markdown(w)
	}
	// A metric no cell of the group measured belongs to other datapaths
	// or workloads of the run (Cilium's BPF counters beside Flannel): one
	// line names them instead of a table of "missing" each.
	var measured, unmeasured []string
	for _, metric := range g.Metrics {
		switch {
		case analysis.IsCoreMetric(metric), metric == analysis.MetricPinNotComparable:
			// A flag on the cell, said once (pinFellBackNote), not a
			// metric row of "1".
		case g.Measured(metric):
			measured = append(measured, metric)
		default:
			unmeasured = append(unmeasured, metric)
		}
	}
	// The workload's headline metrics first: a request/response
	// workload's transactions before its message size.
	slices.SortStableFunc(measured, func(a, b string) int { return headlineRank(a) - headlineRank(b) })
	switch {
	case len(g.Dims.Tunings) == 1:
		// One tuning (every study but rps-rfs): a table per metric would
		// be one row each, forty of them per cell; one table with a row
		// per metric says the same in a screen.
		fmt.Fprintf(w, "### Metrics (tuning %s)\n\n", markdown.Text(g.Dims.Tunings[0]))
		n.metricTable(g, measured).markdown(w)
	case oneCount:
		// Tunings at one replica count (cni-compare with --set tunings):
		// the same, a column per tuning.
		fmt.Fprintf(w, "### Metrics by tuning\n\n")
		n.tuningColumns(g, bm, measured).markdown(w)
	default:
		for _, metric := range measured {
			fmt.Fprintf(w, "### %s\n\n", markdown.Text(analysis.Labeled(metric)))
			if slices.Contains(analysis.PodMetrics, metric) {
				n.podTable(g, metric).markdown(w)
				continue
			}
			n.tuningTable(g, metric, -1, n.absCell).markdown(w)
		}
	}
	for _, metric := range markdownCoreMetrics {
		if !g.Has(metric) || len(g.CPUsOf(metric)) == 0 {
			continue
		}
		base, client := analysis.CoreBase(metric)
		title := base + " per core"
		if client {
			title += " of the client node"
		}
		fmt.Fprintf(w, "### %s\n\n", analysis.WithUnit(title, analysis.Display(metric).Unit))
		switch {
		case base == results.MetricCorePoll && g.AllZero(metric):
			fmt.Fprintf(w, "%s\n\n", pollNone)
		case base == results.MetricCorePoll:
			n.coreTable(g, metric).markdown(w)
			fmt.Fprintf(w, "%s\n\n", pollNote)
		default:
			n.coreTable(g, metric).markdown(w)
		}
	}
	if len(unmeasured) > 0 {
		fmt.Fprintf(w, "Not measured here (other datapaths or workloads of the run have them): %s.\n\n", markdown.Text(strings.Join(unmeasured, ", ")))
	}
	if l := n.pinFellBackNote(g); l != "" {
		fmt.Fprintf(w, "%s\n\n", l)
	}
}

// pinFellBackNote says a group's placement fell back, where it did: its
// samples carry pin_not_comparable (analysis.PinFellBackCells), a flag
// rather than a number to tabulate.
func (n *numbers) pinFellBackNote(g analysis.Group) string {
	if !slices.ContainsFunc(g.Rows, func(r analysis.Row) bool { return n.fellBack[r.Cell] }) {
		return ""
	}
	return "Not comparable: this machine could not honour the placement the workload names " +
		"(pin.fallback: mark), so it ran the nearest one; env.json's notes say why and what ran (pin_not_comparable = 1 in its samples)."
}

// headlineRank orders metrics by analysis.HeadlineMetrics, the others
// after them.
func headlineRank(metric string) int {
	if i := slices.Index(analysis.HeadlineMetrics, metric); i >= 0 {
		return i
	}
	return len(analysis.HeadlineMetrics)
}

// normalizedMetric is the bitrate metric a group's normalized table
// shows ("" when it has none: no bitrate, no tuning but the baseline, or
// no normalized value); the glance shows the same cells.
func (n *numbers) normalizedMetric(g analysis.Group) string {
	if bm := g.BitrateMetric(); bm != "" && othersThanBaseline(g, n.Baseline) && anyNorm(g.Rows, bm) {
		return bm
	}
	return ""
}

func anyNorm(rows []analysis.Row, metric string) bool {
	for _, r := range rows {
		if r.Metric == metric && r.HasNorm {
			return true
		}
	}
	return false
}

// markdownSkipped lists the study's datapaths this machine could not
// build, with why: the run's study.yaml and every table leave them out,
// so without this section summary.md read as if the study had not asked
// for them (env.json's notes and report.html said it; summary.md is read
// alone).
func markdownSkipped(p func(string, ...any), skipped []results.Skipped) {
	if len(skipped) == 0 {
		return
	}
	p("## Not run here\n\n")
	for _, k := range skipped {
		p("- %s: %s\n", markdown.Code(k.Datapath), markdown.Text(k.Reason))
	}
	p("\nThe study asked for these datapaths; this machine could not build them (spec.skipUnavailable), so no table below has them.\n\n")
}

// markdownGaps is what summary.md says before its numbers of what the
// run lacks: no samples, an unfinished run, the warnings loading it
// tolerated, the datapaths it skipped, the rounds a resume cut out of
// the paired intervals and the cells without samples.
func markdownGaps(p func(string, ...any), s *study.Study, m analysis.Model, run *results.Run) {
	var warnings []string
	if run != nil {
		warnings = run.Warnings
	}
	if len(m.Rows) == 0 {
		p("No samples.\n")
	}
	// Free text (a warning quotes a file's error, a tool's message; a
	// study's description and notes are anyone's) renders as written:
	// markdown.Text.
	if l := UnfinishedLine(m.Unfinished, s, ""); l != "" {
		p("**Warning: %s.**\n\n", markdown.Text(l))
	}
	for _, l := range warnings {
		p("**Warning: %s.**\n\n", markdown.Text(l))
	}
	markdownSkipped(p, m.Skipped)
	if n := straddleNote(m.Rows); n != "" {
		p("%s\n\n", markdown.Text(n))
	}
	if miss := missingCells(m.Rows); len(miss) > 0 {
		p("## Cells without samples\n\n")
		for _, c := range miss {
			p("- %s\n", markdown.Text(c))
		}
		p("\nTheir tables below say \"missing\"; %s.\n\n", missingWhy(m.Unfinished, m.Stops))
	}
}
