package study

import (
	"fmt"
	"slices"
)

// Shown is the study as `cnibench show` prints it: Marshal's, without
// the references to cells the resolved study leaves out (a profile's or
// --set's), with a comment saying how many. Marshal keeps them for a
// run's study.yaml, whose report lists them as not measured; but show's
// output, without the profile that left those cells out, was refused
// when loaded again (`show cni-compare --quick > f.yaml; show ./f.yaml`:
// "the study has no workload ..."), and show is where a study file
// starts.
func (s *Study) Shown() ([]byte, error) {
	known := s.runNames()
	known.impairments = appendNew(known.impairments, NoImpairment)
	c := *s
	c.Spec.Reference = nil
	for _, r := range s.Spec.Reference {
		if known.hasAll(r) {
			c.Spec.Reference = append(c.Spec.Reference, r)
		}
	}
	b, err := c.Marshal()
	if n := len(s.Spec.Reference) - len(c.Spec.Reference); n > 0 && err == nil {
		b = append([]byte(fmt.Sprintf("# %d published numbers of cells this study leaves out (by its profile or --set) are not shown.\n", n)), b...)
	}
	return b, err
}

// hasAll says whether c has every name r gives.
func (c *cellNames) hasAll(r Reference) bool {
	for _, n := range r.names() {
		if n.name != "" && !slices.Contains(c.of(n.what), n.name) {
			return false
		}
	}
	return true
}
