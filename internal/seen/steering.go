package seen

import (
	"fmt"
	"math"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// steering: each tuning with RPS or RFS that the run compared with the
// baseline tuning, with the decisions its stops record (the run's end
// and the report's glance) and the range of the ratios they rest on.
func steering(run *results.Run, s *study.Study) found {
	if s == nil {
		return found{}
	}
	var all tally // every steering tuning's decisions: the sighting's lean
	var parts []string
	var shown []results.Cell
	for _, t := range s.Spec.Tunings {
		if t.RPS == nil && t.RFS == nil {
			continue
		}
		var tl tally
		decided := 0 // cells with a ratio behind a decision
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, st := range run.Stops {
			if st.Cell.Tuning != t.Name || st.Decision == "" || st.Versus != s.Spec.Baseline {
				continue
			}
			tl.add(st.Decision)
			all.add(st.Decision)
			shown = append(shown, st.Cell)
			if st.Ratio != nil && st.Decision != "undecided" {
				lo, hi = math.Min(lo, *st.Ratio), math.Max(hi, *st.Ratio)
				decided++
			}
		}
		if tl.empty() {
			continue
		}
		p := fmt.Sprintf("%s (%s) against %s: %s of its cells", t.Name, what(t), s.Spec.Baseline, tl)
		switch {
		case decided == 1:
			p += fmt.Sprintf(", the decided one ×%.2f", lo)
		case decided > 1:
			p += fmt.Sprintf(", the decided ones ×%.2f to ×%.2f", lo, hi)
		}
		parts = append(parts, p)
	}
	// A steering tuning better than the baseline is a reason for the
	// candidate that steers (rfs); worse or equal is against it.
	return found{text: strings.Join(parts, "; "), cells: shown, lean: leanOf(all, string(stats.Better))}
}

// tally counts decisions in the order they first come: "better in 2,
// undecided in 1".
type tally struct {
	order []string
	n     map[string]int
}

func (t *tally) add(verdict string) {
	if t.n == nil {
		t.n = map[string]int{}
	}
	if t.n[verdict] == 0 {
		t.order = append(t.order, verdict)
	}
	t.n[verdict]++
}

func (t tally) empty() bool { return len(t.order) == 0 }

// decided counts the decisions other than undecided.
func (t tally) decided() int {
	n := 0
	for v, c := range t.n {
		if v != string(stats.Undecided) {
			n += c
		}
	}
	return n
}

func (t tally) String() string {
	var out []string
	for _, v := range t.order {
		out = append(out, fmt.Sprintf("%s in %d", v, t.n[v]))
	}
	return strings.Join(out, ", ")
}

// what says in a few words what a steering tuning tuned, since the
// candidate may tune less (the underlay NIC only).
func what(t study.Tuning) string {
	knob := "RPS"
	if t.RFS != nil {
		knob = "RFS"
	}
	where := "the underlay NIC, tunnel device and pods' veths"
	if t.Devices == study.DevicesUnderlay {
		where = "the underlay NIC"
	}
	if t.Pods {
		where += ", and inside the pods"
	}
	return knob + " on " + where
}
