package analysis

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// MarkdownCoreMetrics are the per-core metrics summary.md tabulates (the
// paper's figures); the others are in summary.csv.
var MarkdownCoreMetrics = []string{results.MetricCoreIdle, results.MetricCoreSoftIRQ}

// WriteMarkdown writes summary.md: per datapath and workload, normalized
// and absolute tables (tuning × replicas), per-core tables; per datapath
// and swept workload, one table with a row per swept value; and the
// study's published reference numbers beside ours. s may be nil.
func WriteMarkdown(w io.Writer, s *study.Study, rows []results.SummaryRow) error {
	bw := bufio.NewWriter(w)
	md := mdWriter{w: bw, s: s}
	md.write(rows)
	return bw.Flush()
}

type mdWriter struct {
	w *bufio.Writer
	s *study.Study
}

func (m mdWriter) p(format string, a ...any) { fmt.Fprintf(m.w, format, a...) }

func (m mdWriter) write(rows []results.SummaryRow) {
	name, baseline, trials := "run", "", 0
	var refs []study.Reference
	if m.s != nil {
		name, baseline, trials, refs = m.s.Metadata.Name, m.s.Spec.Baseline, m.s.Spec.Trials, m.s.Spec.Reference
	}
	m.p("# %s: summary\n\n", name)
	if m.s != nil && m.s.Metadata.Description != "" {
		m.p("%s.\n\n", strings.TrimSuffix(m.s.Metadata.Description, "."))
	}
	m.p("Means over trials (%s) with 95%% Student t confidence intervals in brackets.", trialsText(trials))
	if baseline != "" {
		m.p(" Normalized bitrate = mean / mean of the baseline tuning `%s` at the same datapath, workload and replica count;"+
			" its 95%% interval is Fieller's (see docs/statistics.md).", baseline)
	}
	m.p(" Bitrates in Gbit/s (summary.csv keeps bit/s). \"paper X\" is a published number for the same point;" +
		" \"(n=K)\" marks a cell with fewer or more trials than planned.\n\n")
	if len(rows) == 0 {
		m.p("No samples.\n")
	}
	// A swept workload's variants get one section per datapath with a
	// row per swept value (as in report.html), not a section each: a
	// concurrency sweep of 8 values made 8 sections. Their per-core
	// numbers stay in summary.csv.
	swept := map[string]bool{}
	if m.s != nil {
		swept = SweptVariants(m.s)
	}
	for _, g := range Groups(rows) {
		if !swept[g.Workload] {
			m.group(g, refs, trials)
		}
	}
	for _, sw := range Sweeps(m.s, rows) {
		if len(sw.Variants) > 1 {
			m.sweep(SweepSummary(m.s, sw, rows))
		}
	}
	if len(refs) > 0 {
		m.references(refs, rows)
	}
}

func trialsText(trials int) string {
	if trials <= 0 {
		return "n per cell as measured"
	}
	return strconv.Itoa(trials) + " per cell planned"
}

func (m mdWriter) group(g Group, refs []study.Reference, trials int) {
	m.p("## %s / %s\n\n", g.Datapath, g.Workload)
	idx := Index(g.Rows)
	if bm := g.BitrateMetric(); bm != "" && anyNorm(g.Rows, bm) {
		m.p("### Normalized %s (vs %s)\n\n", bm, baselineName(m.s))
		m.tuningTable(g, func(c results.Cell) string {
			r, ok := idx[Key{c, bm, -1}]
			if !ok {
				return "missing"
			}
			return NormCI(r) + nText(r, trials) + PaperNote(refs, r, true)
		})
	}
	for _, metric := range g.Metrics {
		if IsCoreMetric(metric) {
			continue
		}
		sc := Display(metric)
		m.p("### %s (%s)\n\n", metric, sc.Unit)
		m.tuningTable(g, func(c results.Cell) string {
			r, ok := idx[Key{c, metric, -1}]
			if !ok {
				return "missing"
			}
			return sc.MeanCI(r) + nText(r, trials) + PaperNote(refs, r, false)
		})
	}
	for _, metric := range MarkdownCoreMetrics {
		if !g.Has(metric) || len(g.Dims.CPUs) == 0 {
			continue
		}
		sc := Display(metric)
		m.p("### %s per core (%s)\n\n", metric, sc.Unit)
		m.p("| tuning | replicas |")
		for _, cpu := range g.Dims.CPUs {
			m.p(" cpu %d |", cpu)
		}
		m.p("\n|---|---|%s\n", strings.Repeat("---|", len(g.Dims.CPUs)))
		for _, reps := range g.Dims.Replicas {
			for _, t := range g.Dims.Tunings {
				m.p("| %s | %d |", esc(t), reps)
				for _, cpu := range g.Dims.CPUs {
					c := results.Cell{Datapath: g.Datapath, Tuning: t, Workload: g.Workload, Replicas: reps}
					r, ok := idx[Key{c, metric, cpu}]
					cell := "missing"
					if ok {
						cell = sc.MeanCI(r) + PaperNote(refs, r, false)
					}
					m.p(" %s |", esc(cell))
				}
				m.p("\n")
			}
		}
		m.p("\n")
	}
}

// sweep writes one sweep's section: its table and caption.
func (m mdWriter) sweep(t SweepTable) {
	m.p("## %s\n\n", t.Title)
	if len(t.Head) > 0 {
		m.p("|")
		for _, h := range t.Head {
			m.p(" %s |", esc(h))
		}
		m.p("\n|%s\n", strings.Repeat("---|", len(t.Head)))
		for _, r := range t.Rows {
			m.p("|")
			for _, c := range r {
				m.p(" %s |", esc(c))
			}
			m.p("\n")
		}
		m.p("\n")
	}
	m.p("%s\n\n", t.Caption)
}

// tuningTable writes a tuning × replicas table.
func (m mdWriter) tuningTable(g Group, cell func(results.Cell) string) {
	m.p("| tuning |")
	for _, r := range g.Dims.Replicas {
		m.p(" %d replica%s |", r, plural(r))
	}
	m.p("\n|---|%s\n", strings.Repeat("---|", len(g.Dims.Replicas)))
	for _, t := range g.Dims.Tunings {
		m.p("| %s |", esc(t))
		for _, reps := range g.Dims.Replicas {
			m.p(" %s |", esc(cell(results.Cell{Datapath: g.Datapath, Tuning: t, Workload: g.Workload, Replicas: reps})))
		}
		m.p("\n")
	}
	m.p("\n")
}

func (m mdWriter) references(refs []study.Reference, rows []results.SummaryRow) {
	m.p("## Published reference numbers\n\n")
	m.p("| point | metric | published | ours | note |\n|---|---|---|---|---|\n")
	for _, ref := range refs {
		m.p("| %s | %s | %s | %s | %s |\n", esc(RefPoint(ref)), esc(ref.Metric), esc(RefValue(ref)),
			esc(OursFor(ref, rows)), esc(ref.Note))
	}
	m.p("\n")
}

// RefPoint describes where a reference applies ("rfs+, 16 replicas, cpu 3").
func RefPoint(ref study.Reference) string {
	var parts []string
	if ref.Datapath != "" {
		parts = append(parts, ref.Datapath)
	}
	if ref.Tuning != "" {
		parts = append(parts, ref.Tuning)
	}
	if ref.Replicas > 0 {
		parts = append(parts, fmt.Sprintf("%d replica%s", ref.Replicas, plural(ref.Replicas)))
	}
	if ref.CPU != nil {
		parts = append(parts, fmt.Sprintf("cpu %d", *ref.CPU))
	} else if IsCoreMetric(ref.Metric) {
		parts = append(parts, "every cpu")
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, ", ")
}

// RefValue shows a reference's published number(s) in display units.
func RefValue(ref study.Reference) string {
	var parts []string
	if ref.Normalized != nil {
		parts = append(parts, "normalized "+strconv.FormatFloat(*ref.Normalized, 'f', 2, 64))
	}
	if ref.Value != nil {
		sc := Display(ref.Metric)
		parts = append(parts, strings.TrimSpace(sc.Format(*ref.Value)+" "+sc.Unit))
	}
	return strings.Join(parts, ", ")
}

// OursFor shows our number(s) for a reference: the single matching value,
// or the range over several matching rows (a reference without cpu matches
// every core); "not measured" when no row with data matches.
func OursFor(ref study.Reference, rows []results.SummaryRow) string {
	match := RowsFor(ref, rows)
	if len(match) == 0 {
		return "not measured"
	}
	var parts []string
	if ref.Normalized != nil {
		var norm []results.SummaryRow
		for _, r := range match {
			if r.HasNorm {
				norm = append(norm, r)
			}
		}
		switch len(norm) {
		case 0:
			parts = append(parts, "normalized: no baseline")
		case 1:
			parts = append(parts, "normalized "+NormCI(norm[0]))
		default:
			lo, hi := spread(norm, func(r results.SummaryRow) float64 { return r.Normalized })
			parts = append(parts, fmt.Sprintf("normalized %.3f to %.3f over %d rows", lo, hi, len(norm)))
		}
	}
	if ref.Value != nil {
		sc := Display(ref.Metric)
		if len(match) == 1 {
			parts = append(parts, sc.MeanCI(match[0])+" "+sc.Unit)
		} else {
			lo, hi := spread(match, func(r results.SummaryRow) float64 { return r.Mean })
			parts = append(parts, fmt.Sprintf("%s to %s %s (means of %d rows)", sc.Format(lo), sc.Format(hi), sc.Unit, len(match)))
		}
	}
	return strings.Join(parts, "; ")
}

func spread(rows []results.SummaryRow, f func(results.SummaryRow) float64) (lo, hi float64) {
	lo, hi = f(rows[0]), f(rows[0])
	for _, r := range rows[1:] {
		v := f(r)
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// PaperNote is the inline note for a table cell: " · paper X" with the
// published normalized value (normalized tables) or the published value in
// display units (absolute tables); "" when no reference matches.
func PaperNote(refs []study.Reference, r results.SummaryRow, normalized bool) string {
	var out []string
	for _, ref := range RefsFor(refs, r) {
		switch {
		case normalized && ref.Normalized != nil:
			out = append(out, "paper "+strconv.FormatFloat(*ref.Normalized, 'f', 2, 64))
		case !normalized && ref.Value != nil:
			out = append(out, "paper "+Display(r.Metric).Format(*ref.Value))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " · " + strings.Join(out, ", ")
}

func nText(r results.SummaryRow, trials int) string {
	if trials > 0 && r.N > 0 && r.N != trials {
		return fmt.Sprintf(" (n=%d)", r.N)
	}
	return ""
}

func anyNorm(rows []results.SummaryRow, metric string) bool {
	for _, r := range rows {
		if r.Metric == metric && r.HasNorm {
			return true
		}
	}
	return false
}

func baselineName(s *study.Study) string {
	if s == nil {
		return "baseline"
	}
	return s.Spec.Baseline
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// esc keeps a table cell from breaking the Markdown table.
func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
