package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
)

// CellSelector picks cells of a study by their datapath, workload (an
// entry's name, or one variant's: "http@c8"), tuning, replica count and
// impairment; a key left out matches every entry. spec.only lists them:
// a run then measures the cells a selector picks and the cells those are
// compared with (VersusOf), no others. Why: a rerun that decides a run's
// undecided cells needs those cells, and narrowing each list instead
// runs the lists' product (an undecided rps at 1 pair and rfs at 16 rerun
// rps at 16 and rfs at 1 too).
type CellSelector struct {
	Datapath string `yaml:"datapath,omitempty"`
	Workload string `yaml:"workload,omitempty"`
	Tuning   string `yaml:"tuning,omitempty"`
	// Replicas is a pointer so that a given 0 is refused (no study has
	// 0 pod pairs) instead of reading as "any count".
	Replicas   *int   `yaml:"replicas,omitempty"`
	Impairment string `yaml:"impairment,omitempty"`
}

// What a study compares its cells with (Compares): each tuning with the
// baseline tuning, each datapath with the first, or nothing.
const (
	ComparesTunings   = "tunings"
	ComparesDatapaths = "datapaths"
)

// Compares says what the study's cells are compared with and decided
// against: the baseline tuning in a study of several tunings with one,
// else the first datapath in a study of several datapaths, else nothing
// (""). The runner decides so (runner/design.go), and spec.only keeps
// the cells a picked cell is compared with.
func (s *Study) Compares() string {
	switch {
	case s.Spec.Baseline != "" && len(s.Spec.Tunings) > 1:
		return ComparesTunings
	case len(s.Spec.Datapaths) > 1:
		return ComparesDatapaths
	}
	return ""
}

// VersusOf is the cell c is compared with, and whether there is one (a
// baseline cell, or one of the first datapath, is compared with nothing).
func (s *Study) VersusOf(c results.Cell) (results.Cell, bool) {
	b := c
	switch s.Compares() {
	case ComparesTunings:
		b.Tuning = s.Spec.Baseline
	case ComparesDatapaths:
		b.Datapath = s.Spec.Datapaths[0].Name
	}
	return b, b != c
}

// Selected reports whether a run of the study measures cell c: every
// cell without spec.only; with it, a cell a selector picks or one that
// such a cell is compared with.
func (s *Study) Selected(c results.Cell) bool {
	if len(s.Spec.Only) == 0 || s.picked(c) {
		return true
	}
	var others []results.Cell
	switch s.Compares() {
	case ComparesTunings:
		if c.Tuning == s.Spec.Baseline {
			for _, t := range s.Spec.Tunings {
				x := c
				x.Tuning = t.Name
				others = append(others, x)
			}
		}
	case ComparesDatapaths:
		if c.Datapath == s.Spec.Datapaths[0].Name {
			for _, d := range s.Spec.Datapaths {
				x := c
				x.Datapath = d.Name
				others = append(others, x)
			}
		}
	}
	return slices.ContainsFunc(others, s.picked)
}

// picked reports whether a selector of spec.only picks c.
func (s *Study) picked(c results.Cell) bool {
	for _, sel := range s.Spec.Only {
		imp := c.Impairment
		if imp == "" {
			imp = NoImpairment
		}
		if (sel.Datapath == "" || sel.Datapath == c.Datapath) &&
			(sel.Workload == "" || sel.Workload == c.Workload || sel.Workload == EntryOf(c.Workload)) &&
			(sel.Tuning == "" || sel.Tuning == c.Tuning) &&
			(sel.Replicas == nil || *sel.Replicas == c.Replicas) &&
			(sel.Impairment == "" || sel.Impairment == imp) {
			return true
		}
	}
	return false
}

// EntryOf is the workload entry a variant comes from: a sweep's variants
// are named "NAME@VALUE" (Workload.Variants), and names have no "@"
// (nameRE).
func EntryOf(variant string) string {
	name, _, _ := strings.Cut(variant, "@")
	return name
}

// validateOnly checks that every selector of spec.only names entries
// the study has: then each picks at least one cell.
func validateOnly(s *Study, bad badFunc) {
	known := s.onlyNames()
	for i, sel := range s.Spec.Only {
		f := fmt.Sprintf("spec.only[%d]", i)
		if sel == (CellSelector{}) {
			bad(f, "picks every cell: give one or more of datapath, workload, tuning, replicas, impairment")
			continue
		}
		known.misses(sel, func(key, what, name string, list []string) {
			refuseUnknown(bad, f+"."+key, what, name, list)
		})
	}
}

// onlyNames are the names each key of a spec.only selector may give:
// the study's entries as it runs.
type onlyNames struct {
	*cellNames
	replicas []string
}

func (s *Study) onlyNames() onlyNames {
	known := onlyNames{cellNames: s.runNames()}
	if len(known.impairments) == 0 {
		known.impairments = []string{NoImpairment}
	}
	for _, r := range s.Spec.Replicas {
		known.replicas = append(known.replicas, strconv.Itoa(r))
	}
	return known
}

// misses calls miss for each key of sel that names what the study lacks
// (a key left out picks every value, and misses nothing).
func (known onlyNames) misses(sel CellSelector, miss func(key, what, name string, list []string)) {
	check := func(key, what, name string, list []string) {
		if name != "" && !slices.Contains(list, name) {
			miss(key, what, name, list)
		}
	}
	check("datapath", "datapath", sel.Datapath, known.datapaths)
	check("workload", "workload", sel.Workload, known.workloads)
	check("tuning", "tuning", sel.Tuning, known.tunings)
	if sel.Replicas != nil {
		check("replicas", "replica count", strconv.Itoa(*sel.Replicas), known.replicas)
	}
	check("impairment", "impairment", sel.Impairment, known.impairments)
}

// onlyLeft are the selectors of spec.only that name only entries the
// study still has. Preflight drops a datapath a machine cannot build
// (spec.skipUnavailable) or a cluster's CNI does not stand for, and a
// selector naming it picks nothing now: the stored study.yaml, which a
// resume, report and advise --run validate again, must not keep it.
// err is an error at spec.only when no selector is left of some: an
// empty spec.only would select every cell, where the user asked for
// cells no longer in the run.
func (s *Study) onlyLeft() (left []CellSelector, err error) {
	if len(s.Spec.Only) == 0 {
		return nil, nil
	}
	known := s.onlyNames()
	var gone []string
	for _, sel := range s.Spec.Only {
		fits := true
		known.misses(sel, func(_, what, name string, list []string) {
			fits = false
			gone = appendNew(gone, fmt.Sprintf("%s %s", what, name))
		})
		if fits {
			left = append(left, sel)
		}
	}
	if len(left) == 0 {
		return nil, At("spec.only", fmt.Errorf("nothing is left to run: its selectors pick only cells of %s, which this run no longer has (datapaths it runs: %s)",
			strings.Join(gone, ", "), strings.Join(s.DatapathNames(), ", ")))
	}
	return left, nil
}

// CheckOnlyLeft refuses a study whose spec.only picks no cell of what
// is left of it after preflight dropped datapaths (onlyLeft): the run
// would measure nothing.
func (s *Study) CheckOnlyLeft() error {
	_, err := s.onlyLeft()
	return err
}

// Cells expands the matrix in run order: per datapath and replica count the
// pods are built once; trials are interleaved over tunings and workloads so
// slow drift of the machine spreads evenly over the configurations. With
// spec.only, the cells it selects (Selected).
func (s *Study) Cells() []results.Cell {
	if len(s.Spec.Only) == 0 {
		return s.Product()
	}
	var cells []results.Cell
	for _, c := range s.Product() {
		if s.Selected(c) {
			cells = append(cells, c)
		}
	}
	return cells
}

// Product is every cell of the study's lists, in run order, spec.only
// left aside: what a rerun's new selectors, which replace the run's
// own, choose from.
func (s *Study) Product() []results.Cell {
	var cells []results.Cell
	for _, d := range s.Spec.Datapaths {
		for _, r := range s.Spec.Replicas {
			for _, w := range s.Variants() {
				for _, t := range s.Spec.Tunings {
					for _, m := range s.ImpairmentCells() {
						cells = append(cells, results.Cell{Datapath: d.Name, Tuning: t.Name, Workload: w.Name, Replicas: r, Impairment: m})
					}
				}
			}
		}
	}
	return cells
}
