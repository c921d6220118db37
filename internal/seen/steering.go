package seen

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// steering: each tuning with RPS or RFS that the run compared with the
// baseline tuning, with the decisions its stops record (the run's end
// and the report's glance) and the decided cells each with its metric,
// ratio, interval, the interval's confidence level and n. A cell of
// fewer than minTrials trials is left out: it has no interval. The lean
// is the RFS tunings' (steerLean).
func steering(run *results.Run, s *study.Study) found {
	if s == nil {
		return found{}
	}
	var rfs, all tally // the RFS tunings' decisions, every steering tuning's
	var parts []string
	var shown []results.Cell
	for _, t := range s.Spec.Tunings {
		if t.RPS == nil && t.RFS == nil {
			continue
		}
		var tl tally
		var named []string
		decidedCells := 0
		for _, st := range run.Stops {
			n := st.Judged() // the count its decision rests on
			if st.Cell.Tuning != t.Name || st.Decision == "" || report.StopVersus(st, s.Spec.Baseline) != s.Spec.Baseline || n < minTrials {
				continue
			}
			tl.add(st.Decision)
			all.add(st.Decision)
			if t.RFS != nil {
				rfs.add(st.Decision)
			}
			shown = append(shown, st.Cell)
			if st.Ratio != nil && st.Decision != string(stats.Undecided) {
				decidedCells++
				if len(named) < mostNamed {
					named = append(named, decided(report.CellName(st.Cell), st.Metric, *st.Ratio, st.Low, st.High, st.Confidence, fmt.Sprint(n)))
				}
			}
		}
		if tl.empty() {
			continue
		}
		p := fmt.Sprintf("%s (%s) against %s: %s of its cells", t.Name, what(t), s.Spec.Baseline, tl)
		if more := decidedCells - len(named); more > 0 {
			named = append(named, fmt.Sprintf("and %d more decided", more))
		}
		if len(named) > 0 {
			p += " (" + strings.Join(named, "; ") + ")"
		}
		parts = append(parts, p)
	}
	return found{text: strings.Join(parts, "; "), cells: shown, lean: steerLean(rfs, all)}
}

// steerLean: a steering tuning better than the baseline is a reason for
// the candidate that steers (rfs), worse or equal against it. Only the
// tunings with RFS speak for it where the run has any: plain RPS may
// lose at a few flows where RFS gains (seed 000's dip at 2 pairs), which
// read as a trade-off of rfs though no RFS cell was worse. A run of RPS
// alone leans as its RPS tunings do: RPS is half of what rfs sets.
func steerLean(rfs, all tally) string {
	if rfs.empty() {
		rfs = all
	}
	return leanOf(rfs, string(stats.Better), string(stats.Worse))
}

// decided names one decided cell with what its decision rests on:
// "flannel http rfs r=1 requests_per_s ×1.63 [1.50, 1.77] at 95%, n=3"
// (without an interval where the run recorded none).
func decided(cell, metric string, ratio float64, low, high *float64, conf float64, n string) string {
	out := fmt.Sprintf("%s %s ×%.2f", cell, metric, ratio)
	if low != nil && high != nil {
		out += fmt.Sprintf(" [%.2f, %.2f]", *low, *high)
		if conf > 0 {
			out += fmt.Sprintf(" at %.4g%%", 100*conf)
		}
	}
	return out + ", n=" + n
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
