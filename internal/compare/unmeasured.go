package compare

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cnibench/cnibench/internal/results"
)

// OneRun is a metric compared that one run has a value of in no cell,
// while the other has it in Cells of its cells; Gated: a gate judges it,
// and fails its cells in the run that lacks it (Runs' NotMeasured,
// NotMeasuredA), where a metric only shown is no row.
type OneRun struct {
	Metric string
	Cells  int
	Gated  bool
}

// OneRunOnly are the metrics compared (metrics and gated, as Runs takes
// them) that one run has a value of in no cell: inANotB those A alone
// has, inBNotA those B alone, each by name. A comparison of such a
// metric alone printed "No cell and metric appear in both runs: cells
// match by tuning, workload, replica count and impairment", though its
// cells matched, and a default (headline) comparison left out a headline
// metric one run lacks without a word.
func OneRunOnly(a, b *results.Run, metrics, gated []string) (inANotB, inBNotA []OneRun) {
	want := wanted(metrics, gated)
	ca, cb := cellsWith(a.Samples), cellsWith(b.Samples)
	one := func(has, lacks map[string]int, counted []results.Sample) []OneRun {
		var out []OneRun
		if len(counted) == 0 {
			// A run without a counted trial lacks every metric: its
			// cells are missing (failed, not reached), which the rows
			// and the notes say, not a metric it did not measure.
			return nil
		}
		for _, m := range slices.Sorted(maps.Keys(has)) {
			if lacks[m] == 0 && (want.every || want.named[m]) {
				out = append(out, OneRun{Metric: m, Cells: has[m], Gated: want.gated[m]})
			}
		}
		return out
	}
	return one(ca, cb, b.Samples), one(cb, ca, a.Samples)
}

// cellsWith counts, per metric, the cells samples have a finite value
// of it in.
func cellsWith(samples []results.Sample) map[string]int {
	out := map[string]int{}
	for k := range values(samples) {
		out[k.metric]++
	}
	return out
}

// oneRunNotes say, for the head's notes, which metrics compared a run
// has in no cell: "B has no value of cpp_total_ns in any cell (A has it
// in 4 cells)", one line for the metrics only shown (not compared) and one for
// those a gate judges (their cells fail it).
func oneRunNotes(lacks, has string, list []OneRun) []string {
	var out []string
	for _, gated := range []bool{false, true} {
		var parts []string
		for _, o := range list {
			if o.Gated != gated {
				continue
			}
			in := fmt.Sprintf("(%s has it in %d %s)", has, o.Cells, cellWord(o.Cells))
			if len(parts) == 0 {
				parts = append(parts, fmt.Sprintf("%s has no value of %s in any cell %s", lacks, o.Metric, in))
			} else {
				parts = append(parts, fmt.Sprintf("nor of %s %s", o.Metric, in))
			}
		}
		if len(parts) == 0 {
			continue
		}
		text := parts[0]
		if len(parts) > 1 {
			text += ", " + listed(parts[1:], 7)
		}
		if gated {
			text += fmt.Sprintf(": --fail-if fails each cell of %s's that %s's study has (not measured in %s, or missing there)", has, lacks, lacks)
		} else {
			text += ", so no row compares it"
		}
		out = append(out, text)
	}
	return out
}

// noRowText says why a comparison has no row: the metrics compared
// are each in one run only (the notes above name them), or no cell and
// metric appear in both runs, with what each run holds.
func noRowText(h Head) string {
	if len(h.InANotB)+len(h.InBNotA) > 0 {
		return "No row: each metric compared has values in one run only (above)."
	}
	return fmt.Sprintf("No cell and metric appear in both runs: cells match by tuning, workload, replica count and "+
		"impairment, and by datapath where both runs have it.\nA = %s: %s\nB = %s: %s", h.A, h.HoldsA, h.B, h.HoldsB)
}

// jsonOneRun is a OneRun as the JSON gives it.
type jsonOneRun struct {
	Metric string `json:"metric"`
	Cells  int    `json:"cells"`
	Gated  bool   `json:"gated"`
}

func jsonOneRuns(list []OneRun) []jsonOneRun {
	out := []jsonOneRun{}
	for _, o := range list {
		out = append(out, jsonOneRun(o))
	}
	return out
}

func cellWord(n int) string {
	if n == 1 {
		return "cell"
	}
	return "cells"
}
