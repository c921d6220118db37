package study

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// checkReferences checks each published number like the rest of the
// study: its point (datapath, tuning, replica count, CPU) must be one a
// run can have, and its numbers finite.
func checkReferences(sp *Spec, bad badFunc) {
	checkLen("spec.reference", len(sp.Reference), MaxReferences, bad)
	for i, r := range sp.Reference {
		f := fmt.Sprintf("spec.reference[%d]", i)
		if r.Datapath != "" {
			checkName(f+".datapath", r.Datapath, nameRE, "'.', '_', '-'", bad)
		}
		if r.Against != "" {
			checkName(f+".against", r.Against, nameRE, "'.', '_', '-'", bad)
		}
		if len(r.AgainstWorkload) > MaxNameLen {
			bad(f+".againstWorkload", "name is %d bytes long; at most %d", len(r.AgainstWorkload), MaxNameLen)
		}
		if r.Tuning != "" {
			checkName(f+".tuning", r.Tuning, tuningNameRE, "'.', '_', '+', '-'", bad)
		}
		if r.Impairment != "" {
			checkName(f+".impairment", r.Impairment, nameRE, "'.', '_', '-'", bad)
		}
		if r.Replicas < 0 || r.Replicas > MaxReplicas {
			bad(f+".replicas", "must be between 1 and %d (or left out for any), got %d", MaxReplicas, r.Replicas)
		}
		if r.Metric == "" {
			bad(f+".metric", "missing")
		} else if len(r.Metric) > MaxNameLen {
			bad(f+".metric", "name is %d bytes long; at most %d", len(r.Metric), MaxNameLen)
		}
		if r.CPU != nil && (*r.CPU < 0 || *r.CPU > cpuset.MaxCPU) {
			bad(f+".cpu", "must be between 0 and %d, got %d", cpuset.MaxCPU, *r.CPU)
		}
		for _, v := range []struct {
			k string
			p *float64
		}{{"value", r.Value}, {"normalized", r.Normalized}, {"ratio", r.Ratio}, {"difference", r.Difference}, {"upTo", r.UpTo}} {
			if v.p != nil && (math.IsNaN(*v.p) || math.IsInf(*v.p, 0)) {
				bad(f+"."+v.k, "must be a finite number, got %v", *v.p)
			}
		}
		checkUpTo(f, r, bad)
		if r.Normalized != nil && *r.Normalized < 0 {
			bad(f+".normalized", "must be >= 0, got %v", *r.Normalized)
		}
		if r.Ratio != nil && *r.Ratio <= 0 {
			bad(f+".ratio", "must be > 0, got %v", *r.Ratio)
		}
		if len(r.Note) > MaxNoteLen {
			bad(f+".note", "%d bytes; at most %d", len(r.Note), MaxNoteLen)
		}
	}
}

// checkUpTo checks a published range: upTo ends the span of the one
// number it is given with, and lies above it (a span written high to
// low, or an end given to two numbers at once, is a slip the report
// would show as written). An upTo given with no number at all is
// Validate's to report ("give value, normalized, ratio or
// difference"): the slip is the missing number, and a second error
// here would read as a second mistake.
func checkUpTo(f string, r Reference, bad badFunc) {
	if r.UpTo == nil {
		return
	}
	var given []string
	var low float64
	for _, v := range []struct {
		k string
		p *float64
	}{{"value", r.Value}, {"normalized", r.Normalized}, {"ratio", r.Ratio}, {"difference", r.Difference}} {
		if v.p != nil {
			given, low = append(given, v.k), *v.p
		}
	}
	switch {
	case len(given) == 0: // Validate reports the missing number
	case len(given) > 1:
		bad(f+".upTo", "ends the range of one number, but %s are given: give the range in a reference of its own", strings.Join(given, " and "))
	case *r.UpTo <= low:
		bad(f+".upTo", "the range's high end must be above its low end, %s %v; got %v", given[0], low, *r.UpTo)
	}
}
