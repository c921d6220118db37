package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "embed"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

//go:embed report.html.tmpl
var pageText string

var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"prose": prose}).Parse(pageText))

// page is what the template shows.
type page struct {
	Name, Description, Source string
	RunID, Started, Generated string
	// Cluster is the header line of kube runs: the detected CNI beside
	// the study's datapath names the cells carry.
	Cluster string
	// NoiseGuard says, under it, what the noise guard measured on the
	// cluster and what it could not (guardView.line).
	NoiseGuard string
	Warnings   []string
	Missing    []string
	// Glance is each tuning against the baseline in a word and a
	// number (glance.go), first.
	Glance        []table
	GlanceCaption string
	// GlanceFigures draw it by datapath (glancefig.go).
	GlanceFigures []figure
	// Tunings says what each tuning is and what it set (tunings.go).
	Tunings        table
	TuningsCaption string
	Groups         []groupView
	// NoSamples: the run stored no sample at all (Groups may also be
	// empty because every workload is a sweep, shown in Workloads).
	NoSamples   bool
	Workloads   workloadSection
	Datapaths   []figure
	Impairments []figure
	// ImpairmentsIntro opens their section (impairmentsIntro), after
	// what each impairment installed (impairmentsApplied).
	ImpairmentsIntro          string
	ImpairmentsApplied        []string
	ImpairmentsAppliedCaption string
	DatapathTables            []table
	DatapathCaption           string
	Refs                      table
	RefsHeading               string
	RefsLeftOut               string
	// Closing are the sections after the cells' own (closingSections),
	// summary.md's too.
	Closing       []section
	Env           [][2]string
	EnvDetails    []detail
	Comparability []string
	// ComparabilityHeading titles it (comparabilityHeading).
	ComparabilityHeading string
	Notes                []string
	Method               []string
	Rows                 table
}

type groupView struct {
	Name string
	// PinNote says the group's placement fell back (pinFellBackNote).
	PinNote    string
	Normalized *figure
	NormTable  table
	// NormNote says which decision NormTable shows (adaptive runs).
	NormNote string
	AbsTable table
	// Quantity and Unit name what the normalized and absolute views
	// show: "bitrate" in Gbit/s, "transactions per second" in 1/s.
	Quantity, Unit string
	Idle           []figure
	// Poll is the part of Idle the cores spun in cpuidle's polling
	// state, where it was measured; PollNone, instead of figures of
	// zeros, when no core polled in any trial.
	Poll     []figure
	PollNone string
	SoftIRQ  []figure
	// ClientIdle and ClientSoftIRQ are the client node's cores, on a
	// cluster whose client node was sampled apart.
	ClientIdle, ClientSoftIRQ []figure
	// Besides are the tables of the metrics besides the normalized one
	// that a study of tunings compares with the baseline (latencies, CPU
	// cost per packet, the metric it decides on: comparedBesides).
	Besides []titledTable
}

// comparedBesides are a group's metrics compared with the baseline tuning
// that no normalized table shows: latencies, the CPU cost per packet and
// the metric a study's precision target names (analysis: pairRows).
func comparedBesides(g analysis.Group) []string {
	var out []string
	for _, m := range g.Metrics {
		if slices.Contains(analysis.NormalizedMetrics, m) || !g.Measured(m) {
			continue
		}
		if slices.ContainsFunc(g.Rows, func(r analysis.Row) bool { return r.Metric == m && r.VsBaseline != nil }) {
			out = append(out, m)
		}
	}
	return out
}

// titledTable is a table under its own heading.
type titledTable struct {
	Title string
	Table table
}

type detail struct {
	Summary string
	Lines   []string
}

func writeHTML(w io.Writer, run *results.Run, s *study.Study, m analysis.Model) error {
	return pageTmpl.Execute(w, buildPage(run, s, m))
}

func buildPage(run *results.Run, s *study.Study, m analysis.Model) page {
	pg := page{
		// The header ends each with its own '.', as summary.md does: a
		// description ending in one printed "..".
		Name: s.Metadata.Name, Description: strings.TrimSuffix(s.Metadata.Description, "."), Source: strings.TrimSuffix(s.Metadata.Source, "."),
		RunID: run.Env.RunID, Generated: time.Now().UTC().Format(time.RFC3339),
		Warnings: pageWarnings(run, s, m),
	}
	if !run.Env.Started.IsZero() {
		pg.Started = run.Env.Started.UTC().Format(time.RFC3339)
	}
	n := newNumbers(m)
	n.tunings = tuningOrder(s, n.tunings)
	pg.Cluster, pg.NoiseGuard = clusterLine(run.Env, s), guardOf(run).line()
	pg.Missing = missingCells(m.Rows)
	cpuLabel := cpuLabeler(run.Env, len(analysis.DimsOf(m.Rows).CPUs))
	// A swept workload's variants are shown together in the Workloads
	// section (figures and one table); a section per variant buried the
	// report (a concurrency sweep of 8 values gave 8 sections).
	swept := analysis.SweptVariants(s)
	for _, g := range analysis.Groups(m.Rows) {
		if !swept[g.Workload] {
			pg.Groups = append(pg.Groups, groupPage(g, n, cpuLabel))
		}
	}
	pg.Glance, pg.GlanceCaption, pg.GlanceFigures = n.glanceTables(s), glanceCaption(m), n.glanceFigures(s)
	pg.Tunings, pg.TuningsCaption = tuningsTable(s, m), tuningsCaption
	pg.NoSamples = len(run.Samples) == 0
	pg.Workloads = buildWorkloads(s, m, run.Samples)
	pg.Datapaths, pg.DatapathTables = datapathFigures(s, m)
	pg.DatapathCaption = datapathCaption(s, m)
	pg.Datapaths = append(pg.Datapaths, sweepsAcrossDatapaths(s, m.Rows)...)
	pg.Impairments = append(impairmentFigures(s, m.Rows), seriesFigures(s, run.Samples)...)
	pg.ImpairmentsIntro, pg.ImpairmentsApplied = impairmentsIntro(s), impairmentsApplied(run.Env, s)
	pg.ImpairmentsAppliedCaption = impairmentsAppliedCaption
	pg.Refs, pg.RefsLeftOut = n.refTable()
	pg.RefsHeading = refsHeading(s)
	pg.RefsLeftOut = strings.TrimSpace(pg.RefsLeftOut + " " + mislabelledLeftOut(run.Env, s))
	pg.Closing = closingSections(m, s, guardOf(run))
	pg.Env, pg.EnvDetails = envView(run)
	pg.Comparability, pg.ComparabilityHeading = comparability(run, s), comparabilityHeading(s)
	pg.Notes = run.Env.Notes
	pg.Method = method(s, m.Rows)
	pg.Rows = rowsTable(m.Rows)
	return pg
}

// othersThanBaseline reports whether the group has a tuning to set
// against the baseline: a normalized view of the baseline alone is a
// column of 1.000.
func othersThanBaseline(g analysis.Group, baseline string) bool {
	return tuningsBesides(g.Dims.Tunings, baseline)
}

// tuningsBesides reports whether tunings hold one other than the
// baseline: only then is there a normalized bitrate to explain (a study
// of one tuning sets its datapaths side by side instead).
func tuningsBesides(tunings []string, baseline string) bool {
	return baseline != "" && slices.ContainsFunc(tunings, func(t string) bool { return t != baseline })
}

// quantity names the rate a group's normalized and absolute views show
// (analysis.NormalizedMetrics) in words.
func quantity(metric string) string {
	switch metric {
	case results.MetricTransactions:
		return "transactions per second"
	case results.MetricRequests:
		return "requests per second"
	}
	return "bitrate"
}

func groupPage(g analysis.Group, n *numbers, cpuLabel func(int) string) groupView {
	v := groupView{Name: g.Name(), PinNote: n.pinFellBackNote(g)}
	bm := g.BitrateMetric()
	if bm != "" && othersThanBaseline(g, n.Baseline) {
		f := normalizedFigure(g, bm, n)
		if len(g.Dims.Replicas) == 1 {
			// One replica count: a line over replica counts would be a
			// column of points on one tick; the tunings' bars from the
			// baseline's 1 say the same at a glance.
			g1 := g
			g1.Dims.Tunings = slices.DeleteFunc(slices.Clone(g.Dims.Tunings), func(t string) bool { return t == n.Baseline })
			f = n.glanceFigure([]glancePart{{g1, bm, ""}}, g.Name(), bm, g.Dims.Replicas[0])
		}
		v.Normalized = &f
		v.NormTable = n.tuningTable(g, bm, -1, n.normCell)
		if len(n.stops) > 0 {
			v.NormNote = normNote
		}
	}
	if bm != "" {
		v.AbsTable = n.tuningTable(g, bm, -1, n.absCell)
		v.Quantity, v.Unit = quantity(bm), analysis.Display(bm).Unit
	}
	for _, m := range comparedBesides(g) {
		v.Besides = append(v.Besides, titledTable{analysis.Labeled(m), n.tuningTable(g, m, -1, n.absCell)})
	}
	for _, m := range []struct {
		metric string
		out    *[]figure
	}{{results.MetricCoreIdle, &v.Idle}, {results.MetricCorePoll, &v.Poll}, {results.MetricCoreSoftIRQ, &v.SoftIRQ},
		{analysis.ClientCore(results.MetricCoreIdle), &v.ClientIdle}, {analysis.ClientCore(results.MetricCoreSoftIRQ), &v.ClientSoftIRQ}} {
		if !g.Has(m.metric) {
			continue
		}
		if m.metric == results.MetricCorePoll && g.AllZero(m.metric) {
			v.PollNone = pollNone
			continue
		}
		for _, reps := range extremeReplicas(g, m.metric) {
			*m.out = append(*m.out, coreFigure(g, m.metric, reps, n, cpuLabel))
		}
	}
	return v
}

// extremeReplicas returns the smallest and largest replica counts with
// per-core data (the paper shows 1 and 16), or all counts if none has data
// (the figures then say what is missing).
func extremeReplicas(g analysis.Group, metric string) []int {
	var with []int
	seen := map[int]bool{}
	for _, r := range g.Rows {
		if r.Metric == metric && r.N > 0 && !seen[r.Replicas] {
			seen[r.Replicas] = true
			with = append(with, r.Replicas)
		}
	}
	sort.Ints(with)
	switch {
	case len(with) == 0:
		return g.Dims.Replicas[:min(1, len(g.Dims.Replicas))]
	case len(with) == 1:
		return with
	}
	return []int{with[0], with[len(with)-1]}
}

// missingCells lists the cells whose every row is empty.
func missingCells(rows []analysis.Row) []string {
	has := map[results.Cell]bool{}
	var order []results.Cell
	for _, r := range rows {
		if _, ok := has[r.Cell]; !ok {
			order = append(order, r.Cell)
			has[r.Cell] = false
		}
		if r.N > 0 {
			has[r.Cell] = true
		}
	}
	var out []string
	for _, c := range order {
		if !has[c] {
			out = append(out, fmt.Sprintf("%s / %s / %s / %d replica%s", c.Datapath, c.Tuning, c.Workload, c.Replicas, plural(c.Replicas)))
		}
	}
	return out
}

// cpuLabeler labels cores with the emulated node they are pinned to, so a
// reader sees whose CPU a bar is; names are dropped on wide machines where
// they would overlap.
func cpuLabeler(env results.Env, ncpu int) func(int) string {
	owner := map[int][]string{}
	var nodes []string
	for n := range env.NodeCPUs {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		for _, c := range env.NodeCPUs[n] {
			owner[c] = append(owner[c], n)
		}
	}
	return func(cpu int) string {
		l := strconv.Itoa(cpu)
		if o := owner[cpu]; len(o) > 0 && ncpu <= 12 {
			l += "\n" + strings.Join(o, "+")
		}
		return l
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
