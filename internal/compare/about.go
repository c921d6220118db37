package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/version"
)

// Head names the two runs of a comparison: their directories, what each
// was (About) and what differs between them that can move their numbers:
// their environments, and the cells one core bound in one run or both.
type Head struct {
	A, B string // run directories
	// AboutA and AboutB say how each run was started and where it ran;
	// "" for a run without env.json.
	AboutA, AboutB string
	// Differ lists what differs between the runs' environments ("kernel
	// 6.1.0-13 / 6.18.4") and studies ("study duration 10s / 30s",
	// StudyDifferences): what a difference in the table may come from
	// besides the change under test.
	Differ []string
	// Same says that A and B are one run directory.
	Same bool
	// Bound are the cells of both runs that one core bound in either.
	Bound []Bound
	// HoldsA and HoldsB say which cells each run holds (Holds): what a
	// reader needs when no cell matches.
	HoldsA, HoldsB string
	// UnfinishedA and UnfinishedB count the cells each run ended before
	// finishing (Unfinished) of its Cells: their numbers are partial,
	// which the page says beside the run, with the command that
	// continues it (ResumeA, ResumeB; nil: cnibench run --resume DIR).
	UnfinishedA, UnfinishedB int
	CellsA, CellsB           int
	ResumeA, ResumeB         []string
	// LeftOutB names A's cells that B's study leaves out (LeftOutB): not
	// compared, and not failed by a gate, but said; LeftOutA the same of
	// B's cells that A's study leaves out (LeftOutA).
	LeftOutB, LeftOutA []string
	// Neither names the cells both studies include that neither run has
	// a counted trial of (Neither): no row, not failed, but said.
	Neither []string
	// NoStudyB says why B's study.yaml could not be resolved ("": it
	// was): then a cell of A that B left no trace of is not known to be
	// B's, and is neither a row nor failed.
	NoStudyB string
	// NoStudyA says why A's study.yaml could not be resolved: then a
	// cell of B that A left no trace of is neither a row nor failed.
	NoStudyA string
	// InANotB are the metrics compared that B has a value of in no cell
	// and A has (OneRunOnly), InBNotA the other way round: no row
	// compares them (a gate fails their cells), which the page says
	// rather than leave them out unsaid.
	InANotB, InBNotA []OneRun
	// LoadedA and LoadedB are what loading each run tolerated
	// (results.Run.Warnings: a line cut by a crash, a missing env.json),
	// which the report of the run says too.
	LoadedA, LoadedB []string
}

// NewHead describes runs a and b, found in directories dirA and dirB
// (same: one directory by two paths); studyA and studyB are the cells of
// each run's study, as Runs takes them, so that its other words pair the
// cells as the rows do.
func NewHead(dirA, dirB string, a, b *results.Run, studyA, studyB []results.Cell, same bool) Head {
	h := Head{A: dirA, B: dirB, Same: same, Bound: OneCore(a, b, studyA, studyB), HoldsA: Holds(a.Samples), HoldsB: Holds(b.Samples),
		LoadedA: a.Warnings, LoadedB: b.Warnings, LeftOutB: LeftOutB(a, b, studyA, studyB),
		LeftOutA: LeftOutA(a, b, studyA, studyB), Neither: Neither(a, b, studyA, studyB)}
	if a.HasEnv {
		h.AboutA = About(a.Env)
	}
	if b.HasEnv {
		h.AboutB = About(b.Env)
	}
	if a.HasEnv && b.HasEnv && !same {
		// One run by two paths differs in nothing (not even a build
		// that names none: it is the one build).
		h.Differ = Differences(a.Env, b.Env, ranBoth(a.Samples, b.Samples))
	}
	h.Differ = append(h.Differ, StudyDifferences(a.Study, b.Study)...)
	return h
}

// Holds names the datapaths, workloads, tunings, replica counts and
// impairments of a run's counted samples, in the order they first ran:
// "datapaths flannel, bridge; workloads http@c8, tcp; tunings baseline;
// replicas 1".
func Holds(samples []results.Sample) string {
	dims := []struct {
		name string
		of   func(results.Cell) string
	}{
		{"datapaths", func(c results.Cell) string { return c.Datapath }},
		{"workloads", func(c results.Cell) string { return c.Workload }},
		{"tunings", func(c results.Cell) string { return c.Tuning }},
		{"replicas", func(c results.Cell) string { return fmt.Sprint(c.Replicas) }},
		{"impairments", func(c results.Cell) string { return c.Impairment }},
	}
	var parts []string
	for _, d := range dims {
		var names []string
		for _, s := range samples {
			if n := d.of(s.Cell); n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			parts = append(parts, d.name+" "+strings.Join(names, ", "))
		}
	}
	if len(parts) == 0 {
		return "no measured cell"
	}
	return strings.Join(parts, "; ")
}

// About says how a run was started and where it ran: "cnibench run
// rps-rfs --quick; local engine, host h1, kernel 6.1.0, started
// 2026-11-28 13:55 UTC".
func About(e results.Env) string {
	var parts []string
	if e.Origin != nil && len(e.Origin.Command) > 0 {
		parts = append(parts, cmdline.Quote(e.Origin.Command))
	}
	where := fmt.Sprintf("%s engine, host %s, kernel %s", e.Engine, orUnknown(e.Hostname), orUnknown(e.Kernel))
	if !e.Started.IsZero() {
		where += ", started " + e.Started.UTC().Format("2006-01-02 15:04 MST")
	}
	return strings.Join(append(parts, where), "; ")
}

// Differences lists what differs between two runs' environments that can
// move their numbers, each as "what A / B". ran says which tunings both
// runs measured: one of them that wrote nothing in one run and something
// in the other (a "baseline" redefined by --set) differs too.
func Differences(a, b results.Env, ran map[string]bool) []string {
	var out []string
	add := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %s / %s", what, orNone(x), orNone(y)))
		}
	}
	add("engine", a.Engine, b.Engine)
	// A cluster node its agent could not describe has these blank:
	// unknown, which differs from nothing.
	if a.Hostname != "" && b.Hostname != "" {
		add("host", a.Hostname, b.Hostname)
	}
	if a.Kernel != "" && b.Kernel != "" {
		add("kernel", a.Kernel, b.Kernel)
	}
	cpuA, cpuB := cpuPair(a, b)
	add("CPU", cpuA, cpuB)
	out = append(out, clientNodeDifferences(a, b)...)
	// Runs before env.json recorded cpuidle have none: not a difference.
	if a.CPUIdle != nil && b.CPUIdle != nil {
		add("CPU idle", a.CPUIdle.String(), b.CPUIdle.String())
	}
	if unknownBuild(a.Version) || unknownBuild(b.Version) {
		// "dev" and "-dirty" name no one build: two runs of "dev", or of
		// one commit with different uncommitted changes, may run
		// different code under one version, so equal is not the same.
		out = append(out, fmt.Sprintf("cnibench %s / %s (a dev or -dirty build: the builds cannot be told apart, "+
			"so they may differ whatever the versions say)", orNone(a.Version), orNone(b.Version)))
	} else {
		add("cnibench", a.Version, b.Version)
	}
	add("CNI", cniText(a.CNI), cniText(b.CNI))
	for _, d := range []string{imageDifference(a, b), machineCPUsDifference(a, b)} {
		if d != "" {
			out = append(out, d)
		}
	}
	// Bridged frames pass iptables or not by br_netfilter, which anything
	// on the machine may have loaded: the same datapath then costs more.
	// A datapath of several forms (weave: Open vSwitch's, or a bridge
	// standing in where the kernel lacks it; a Calico tunnel without tx
	// checksumming on an old kernel) may have built another here.
	for _, name := range slices.Sorted(maps.Keys(a.Datapaths)) {
		x, y := a.Datapaths[name].BridgeNFCallIPTables, b.Datapaths[name].BridgeNFCallIPTables
		if x != "" && y != "" {
			add("datapath "+name+" bridge-nf-call-iptables", x, y)
		}
		x, y = a.Datapaths[name].Mode, b.Datapaths[name].Mode
		if x != "" && y != "" {
			add("datapath "+name+" mode", x, y)
		}
	}
	if a.Origin != nil && b.Origin != nil {
		add("command", cmdline.Quote(a.Origin.Command), cmdline.Quote(b.Origin.Command))
	}
	// A tuning of one name may write other values on another machine (a
	// mask over more CPUs) or find them in place there (bbr already the
	// default): its cells then measure different things.
	names := map[string]bool{}
	for name := range a.Tunings {
		names[name] = true
	}
	for name := range b.Tunings {
		names[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		setA, inA := a.Tunings[name]
		setB, inB := b.Tunings[name]
		if (inA && inB) || ran[name] {
			add("tuning "+name, tuningText(setA), tuningText(setB))
		}
	}
	return append(out, impairmentDifferences(a, b)...)
}

// clientNodeDifferences lists what differs between two cluster runs'
// client nodes (results.Env.ClientNode, which the kube engine records;
// host, kernel and CPUs above are the server node's): its name, host,
// kernel and CPU count, and whether it ran on the server node's kernel,
// the other end of every inter-node trial. A run that recorded no
// client node (the local engine's, or one before it was recorded), or
// a fact left blank (its agent could not say), is unknown and differs
// from nothing.
func clientNodeDifferences(a, b results.Env) []string {
	x, y := a.ClientNode, b.ClientNode
	if x == nil || y == nil {
		return nil
	}
	var out []string
	add := func(what, p, q string) {
		if p != "" && q != "" && p != q {
			out = append(out, fmt.Sprintf("%s %s / %s", what, p, q))
		}
	}
	count := func(n int) string {
		if n <= 0 {
			return ""
		}
		return fmt.Sprint(n)
	}
	yesNo := map[bool]string{false: "no", true: "yes"}
	add("client node", x.Name, y.Name)
	add("client node host", x.Hostname, y.Hostname)
	add("client node kernel", x.Kernel, y.Kernel)
	add("client node CPUs", count(x.CPUs), count(y.CPUs))
	add("client node on the server node's kernel", yesNo[a.SharedKernel], yesNo[b.SharedKernel])
	return out
}

// unknownBuild says that a recorded version names no one build
// (version.Names: "dev", or built with uncommitted changes); a run that
// recorded none is left to the plain comparison.
func unknownBuild(v string) bool {
	return v != "" && !version.Names(v)
}

// ranBoth is the set of tunings both runs have samples of.
func ranBoth(a, b []results.Sample) map[string]bool {
	inA := map[string]bool{}
	for _, s := range a {
		inA[s.Cell.Tuning] = true
	}
	out := map[string]bool{}
	for _, s := range b {
		if inA[s.Cell.Tuning] {
			out[s.Cell.Tuning] = true
		}
	}
	return out
}

// tuningText is what a tuning wrote where, and what it found: "rps_cpus
// = 00000003 at node over 0".
func tuningText(set []results.TuningSetting) string {
	var parts []string
	for _, s := range set {
		found := strings.Join(s.Found, ", ")
		if s.Unchanged {
			found = "unchanged"
		}
		parts = append(parts, fmt.Sprintf("%s = %s at %s over %s", s.Knob, s.Value, s.Where, found))
	}
	return strings.Join(parts, ", ")
}

func cniText(c *results.CNI) string {
	if c == nil {
		return ""
	}
	return c.String()
}

// cpuPair says two runs' CPUs as Differences compares them: "64 ×
// MODEL", each part only where both runs recorded it (a count of 0 or
// a blank model is unknown: a cluster node its agent could not describe,
// an older run's arm64 model), so that unknown is no difference.
func cpuPair(a, b results.Env) (string, string) {
	count := a.CPUs > 0 && b.CPUs > 0
	model := a.CPUModel != "" && b.CPUModel != ""
	of := func(e results.Env) string {
		switch {
		case count && model:
			return fmt.Sprintf("%d × %s", e.CPUs, e.CPUModel)
		case count:
			return fmt.Sprintf("%d CPUs", e.CPUs)
		case model:
			return e.CPUModel
		}
		return ""
	}
	return of(a), of(b)
}

// orUnknown is s, or "unknown" where env.json left it blank.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// notes are what the page says of the two runs above its table: a run
// that did not finish, A and B one directory, and what differs between
// them besides the change under test.
func (h Head) notes() []string {
	var out []string
	for _, u := range []struct {
		side, dir     string
		unfinished, n int
		resume        []string
	}{{"A", h.A, h.UnfinishedA, h.CellsA, h.ResumeA}, {"B", h.B, h.UnfinishedB, h.CellsB, h.ResumeB}} {
		if u.unfinished > 0 {
			if u.resume == nil {
				u.resume = []string{"cnibench", "run", "--resume", u.dir}
			}
			// B's unfinished cells fail a gate (gate.Cell.Unfinished);
			// A's, the baseline, are judged on what they have.
			judged := "are judged on the trials they have"
			if u.side == "B" {
				judged = "fail a gate whatever their trials say"
			}
			out = append(out, fmt.Sprintf("%s did not finish: %d of its %d cells were not done when it ended, so their numbers are partial "+
				"and %s, and a cell it has no trial of that the other run has fails a gate (continue it with: %s)",
				u.side, u.unfinished, u.n, judged, cmdline.Quote(u.resume)))
		}
	}
	if n := len(h.LeftOutB); n > 0 {
		out = append(out, fmt.Sprintf("B's study leaves out %d of A's cells, which are not compared: %s", n, listed(h.LeftOutB, 8)))
	}
	if n := len(h.LeftOutA); n > 0 {
		out = append(out, fmt.Sprintf("A's study leaves out %d of B's cells, which are not compared: %s", n, listed(h.LeftOutA, 8)))
	}
	if n := len(h.Neither); n > 0 {
		out = append(out, fmt.Sprintf("neither run has a counted trial of %d cell(s) both studies include (every trial failed, the cell was given up, "+
			"or the run ended first, in both), which are not compared: %s", n, listed(h.Neither, 8)))
	}
	out = append(out, oneRunNotes("B", "A", h.InANotB)...)
	out = append(out, oneRunNotes("A", "B", h.InBNotA)...)
	if h.NoStudyA != "" {
		out = append(out, "A's study.yaml could not be resolved ("+h.NoStudyA+"): a cell of B that A has no trace of is left out of the table, not failed")
	}
	if h.NoStudyB != "" {
		out = append(out, "B's study.yaml could not be resolved ("+h.NoStudyB+"): a cell of A that B has no trace of is left out of the table, not failed")
	}
	for _, l := range []struct {
		side  string
		words []string
	}{{"A", h.LoadedA}, {"B", h.LoadedB}} {
		for _, w := range l.words {
			out = append(out, l.side+": "+w)
		}
	}
	if h.Same {
		out = append(out, "A and B are the same run directory: every ratio is 1 by construction, and the table says nothing about a change.")
	}
	if len(h.Differ) > 0 {
		out = append(out, fmt.Sprintf("The runs differ in: %s (besides any change under test, these may move the numbers)", strings.Join(h.Differ, "; ")))
	}
	return out
}

// Warnings are the page's words on the two runs, one line each, for the
// formats whose table has no place for them (csv, json), which print
// them on stderr so that a CI log keeps them: the notes above the table,
// that no cell matched (with what each run holds), and the cells one
// core bound, whose table comes after the rows.
func Warnings(h Head, rows []Row) []string {
	out := h.notes()
	switch {
	case len(rows) > 0:
	case len(h.InANotB)+len(h.InBNotA) > 0:
		out = append(out, "no row: each metric compared has values in one run only")
	default:
		out = append(out, fmt.Sprintf("no cell and metric appear in both runs: A = %s: %s; B = %s: %s", h.A, h.HoldsA, h.B, h.HoldsB))
	}
	var below []string
	for _, r := range rows {
		if r.A.Mean < 0 && !math.IsNaN(r.Ratio.Ratio) {
			below = append(below, r.Key+" "+r.Metric)
		}
	}
	if len(below) > 0 {
		out = append(out, belowZeroNote+": "+listed(below, 8))
	}
	if len(h.Bound) > 0 {
		var cells []string
		for _, b := range h.Bound {
			cells = append(cells, fmt.Sprintf("%s (%s node: A %s, B %s)", b.Key, b.Node, boundWord(b.ABound), boundWord(b.BBound)))
		}
		out = append(out, fmt.Sprintf("bound by one core in A or B, so a ratio may compare one core's limit with another "+
			"(docs/statistics.md, \"Bound by one core\"): %s", strings.Join(cells, "; ")))
	}
	return out
}

// listed joins names, at most n of them and how many more.
func listed(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func boundWord(bound bool) string {
	if bound {
		return "bound"
	}
	return "not bound"
}
