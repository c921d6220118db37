package analysis

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// Scope is the part of a study that a rerun deciding its undecided cells
// needs: the study's datapaths, workloads, tunings, replica counts and
// impairments that an undecided cell or the cell it was compared with
// has, in the study's order. `--set datapaths=[...]` and its like pick
// the study's own entries by name, so a rerun of the scope runs the same
// cells, not every cell again: in a study of nine datapaths of which one
// is undecided against the first, two datapaths. The product of the
// lists may hold decided cells too (an undecided rps at 1 replica and an
// undecided rfs at 16 rerun both tunings at both counts); their trials
// are costed.
type Scope struct {
	// Sets are the --set overrides that narrow the study to the scope,
	// as key and value ("replicas", "[1, 16]"), for the lists that
	// shrink: none when the scope is the whole study.
	Sets [][2]string
	// kept are the names each narrowed list keeps, by the cell's name
	// for it (of).
	kept []kept
	// exact, when the scope picks cells (spec.only), is the cells it
	// holds: the undecided ones and those they are compared with.
	exact map[results.Cell]bool
}

type kept struct {
	names []string
	of    func(results.Cell) string
}

// RerunScope is the scope of a run's undecided cells in the study s that
// ran them (the whole study when none is undecided).
func RerunScope(stops []results.Stop, s *study.Study) Scope {
	var need, picks []results.Cell
	for _, st := range stops {
		if !undecided(st) {
			continue
		}
		need, picks = append(need, st.Cell), append(picks, st.Cell)
		if c, ok := versusCell(stops, st); ok {
			need = append(need, c)
		}
	}
	all := known(stops, s)
	sc := scopeOf(need, all, s)
	sc.pick(picks, need, all)
	return sc
}

// known are the cells of study s that a narrowing must reckon with: the
// cells the run measured (stops) and, in a run of spec.only, the cells
// its selectors left out. A rerun's selectors replace the run's own, so
// they must not pick those either, and an entry only they have is
// narrowed away. Cells the machine skipped (a datapath its kernel cannot
// build) are in neither: leaving them out narrows nothing.
func known(stops []results.Stop, s *study.Study) []results.Cell {
	var out []results.Cell
	for _, st := range stops {
		out = append(out, st.Cell)
	}
	for _, c := range s.Product() {
		if !s.Selected(c) {
			out = append(out, c)
		}
	}
	return out
}

// pick adds spec.only to the scope where its lists' product still holds
// known cells that no undecided cell needs (an undecided rps at 1
// pair and rfs at 16 keep rps at 16 and rfs at 1 in the lists): one
// selector per undecided cell, as short as it can be (pickOf), the same
// ones once; the cells they are compared with come with them
// (study.Selected). Has then holds the needed cells only.
func (sc *Scope) pick(picks, need, all []results.Cell) {
	needed := map[results.Cell]bool{}
	for _, c := range need {
		needed[c] = true
	}
	var inside []results.Cell
	extra := false
	for _, c := range all {
		if sc.Has(c) {
			inside = append(inside, c)
			extra = extra || !needed[c]
		}
	}
	if !extra || len(picks) == 0 {
		return
	}
	var sels []string
	for _, c := range picks {
		if sel := pickOf(c, inside, needed); !slices.Contains(sels, sel) {
			sels = append(sels, sel)
		}
	}
	sc.Sets = append(sc.Sets, [2]string{"only", "[" + strings.Join(sels, ", ") + "]"})
	sc.exact = needed
}

// cellDims are a cell's dimensions as spec.only's selectors name them.
var cellDims = []struct {
	key string
	of  func(results.Cell) string
}{
	{"datapath", func(c results.Cell) string { return c.Datapath }},
	{"workload", func(c results.Cell) string { return c.Workload }},
	{"tuning", func(c results.Cell) string { return c.Tuning }},
	{"replicas", func(c results.Cell) string { return strconv.Itoa(c.Replicas) }},
	{"impairment", impairmentName},
}

// varies reports whether cells have more than one entry in dimension
// cellDims[i].
func varies(i int, cells []results.Cell) bool {
	return slices.ContainsFunc(cells, func(o results.Cell) bool { return cellDims[i].of(o) != cellDims[i].of(cells[0]) })
}

// pickOf is a selector of cell c among the cells inside the narrowed
// lists: c's value in each dimension where they vary, then without each
// key that picks no cell but needed ones when left out ("{replicas: 1}"
// where every tuning at 1 pair is undecided, not one selector per
// tuning), at least one key kept.
func pickOf(c results.Cell, inside []results.Cell, needed map[results.Cell]bool) string {
	var keys []int
	for i := range cellDims {
		if varies(i, inside) {
			keys = append(keys, i)
		}
	}
	onlyNeeded := func(keys []int) bool {
		for _, o := range inside {
			if !needed[o] && !slices.ContainsFunc(keys, func(i int) bool { return cellDims[i].of(o) != cellDims[i].of(c) }) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(keys) && len(keys) > 1; {
		if fewer := slices.Delete(slices.Clone(keys), i, i+1); onlyNeeded(fewer) {
			keys = fewer
			continue
		}
		i++
	}
	var kv []string
	for _, i := range keys {
		kv = append(kv, cellDims[i].key+": "+cellDims[i].of(c))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// ScopeOf is the part of study s, which ran stops, that holds the given
// cells (the whole study when there are none): advise --prove measures
// a candidate on the cells of the run where its finding showed.
func ScopeOf(cells []results.Cell, stops []results.Stop, s *study.Study) Scope {
	return scopeOf(cells, known(stops, s), s)
}

// Picks is spec.only's value that picks exactly the given cells of
// study s, which ran stops, in every entry of the free dimensions (the
// cellDims keys whose entries an A/B replaces: "tuning", and "datapath"
// for an A/B of datapaths): one selector per cell, in the dimensions
// where the cells' scope (ScopeOf) holds several entries, the same ones
// once; "" when the scope's lists pick no other cell. advise --prove on
// a run's cells: a finding in flannel's HTTP at 1 pair and bridge's TCP
// at 4 is measured there, not in all eight cells of the lists' product.
func Picks(cells []results.Cell, stops []results.Stop, s *study.Study, free ...string) string {
	sc := ScopeOf(cells, stops, s)
	var inside []results.Cell
	for _, c := range s.Product() {
		if sc.Has(c) {
			inside = append(inside, c)
		}
	}
	var keys []int
	for i, d := range cellDims {
		if !slices.Contains(free, d.key) && varies(i, inside) {
			keys = append(keys, i)
		}
	}
	selector := func(c results.Cell) string {
		var kv []string
		for _, i := range keys {
			kv = append(kv, cellDims[i].key+": "+cellDims[i].of(c))
		}
		return "{" + strings.Join(kv, ", ") + "}"
	}
	var sels []string
	for _, c := range cells {
		if sel := selector(c); !slices.Contains(sels, sel) {
			sels = append(sels, sel)
		}
	}
	if len(keys) == 0 || !slices.ContainsFunc(inside, func(c results.Cell) bool { return !slices.Contains(sels, selector(c)) }) {
		return ""
	}
	return "[" + strings.Join(sels, ", ") + "]"
}

// scopeOf is ScopeOf over the known cells (known).
func scopeOf(cells, all []results.Cell, s *study.Study) Scope {
	var sc Scope
	var need map[results.Cell]bool // nil: no narrowing, every cell
	for _, c := range cells {
		if need == nil {
			need = map[results.Cell]bool{}
		}
		need[c] = true
	}
	has := func(f func(results.Cell) bool) bool {
		if need == nil {
			return true
		}
		for c := range need {
			if f(c) {
				return true
			}
		}
		return false
	}
	// ran tells the entries of known cells from those the machine
	// skipped: leaving those out narrows nothing.
	ran := func(f func(results.Cell) bool) bool {
		return slices.ContainsFunc(all, f)
	}
	keep := func(key string, names []string, of func(results.Cell) string) {
		var out []string
		shrinks := false
		for _, n := range names {
			is := func(c results.Cell) bool { return of(c) == n }
			switch {
			case has(is):
				out = append(out, n)
			case ran(is):
				shrinks = true
			}
		}
		if shrinks {
			sc.Sets = append(sc.Sets, [2]string{key, "[" + strings.Join(out, ", ") + "]"})
			sc.kept = append(sc.kept, kept{out, of})
		}
	}
	keep("datapaths", s.DatapathNames(), func(c results.Cell) string { return c.Datapath })
	keep("workloads", names(s.Spec.Workloads, func(w study.Workload) string { return w.Name }), func(c results.Cell) string { return study.EntryOf(c.Workload) })
	keep("tunings", names(s.Spec.Tunings, func(t study.Tuning) string { return t.Name }), func(c results.Cell) string { return c.Tuning })
	keep("impairments", names(s.Spec.Impairments, func(m study.Impairment) string { return m.Name }), impairmentName)
	keep("replicas", names(s.Spec.Replicas, strconv.Itoa), func(c results.Cell) string { return strconv.Itoa(c.Replicas) })
	return sc
}

// Has reports whether a rerun of the scope runs cell c: every list that
// was narrowed keeps c's entry.
func (sc Scope) Has(c results.Cell) bool {
	if sc.exact != nil {
		return sc.exact[c]
	}
	for _, k := range sc.kept {
		if !slices.Contains(k.names, k.of(c)) {
			return false
		}
	}
	return true
}

// impairmentName is a cell's impairment as the study names it: the
// unimpaired cells' empty name is the preset none.
func impairmentName(c results.Cell) string {
	if c.Impairment == "" {
		return study.NoImpairment
	}
	return c.Impairment
}

func names[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}
