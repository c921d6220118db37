package analysis

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// A published per-core number is of the paper's machine's core N (rps-rfs:
// its core 3, which took the softirqs of its virtual NIC's interrupts),
// and ours beside it is of our CPU N, whatever that core did here: a veth
// pair has no interrupt, and the core that ran the receive softirqs was
// whichever sent (docs/rps-rfs.md). markCoreMethods says, beside each
// per-core reference, which core took the paper's softirqs (its baseline
// core_softirq reference with the highest value, where the study gives
// one) and which took NET_RX here: the core with the most NET_RX
// softirqs in the baseline cell at the reference's point.

// markCoreMethods adds that to the Method of every reference naming a
// core (Reference.CPU), whether or not this run has that core.
func markCoreMethods(refs []RefMatch, rows []Row, s *study.Study) {
	baseline := ""
	if s != nil {
		baseline = s.Spec.Baseline
	}
	for i := range refs {
		m := &refs[i]
		ref := m.Reference
		if ref.CPU == nil || !IsCoreMetric(ref.Metric) {
			continue
		}
		_, client := CoreBase(ref.Metric)
		paper, paperOK := paperSoftIRQCore(refs, baseline, client)
		ours := netRxCores(ref, rows, baseline, client)
		if len(ours) == 0 && !paperOK {
			continue
		}
		m.Method = strings.TrimPrefix(m.Method+"; "+coreMethod(*ref.CPU, paper, paperOK, ours, baseline), "; ")
	}
}

// coreMethod words it: "the paper's core 3 took its softirqs; here CPU 1
// took the most NET_RX (baseline), so compare CPU 1's row".
func coreMethod(cpu, paper int, paperOK bool, ours []int, baseline string) string {
	var parts []string
	if paperOK {
		parts = append(parts, "the paper's core "+strconv.Itoa(paper)+" took its softirqs")
	} else {
		parts = append(parts, "core numbers are each machine's own")
	}
	if len(ours) == 0 {
		return parts[0] + "; no core ran NET_RX softirqs here at that point"
	}
	here := "here CPU " + joinInts(ours, " or ") + " took the most NET_RX softirqs"
	if baseline != "" {
		here += " (" + baseline + ")"
	}
	switch {
	case paperOK && cpu == paper && !slices.Contains(ours, cpu):
		here += ", so compare CPU " + joinInts(ours, " or ") + "'s row"
	case paperOK && cpu != paper && slices.Contains(ours, cpu):
		here += ": our CPU " + strconv.Itoa(cpu) + " did the paper's core " + strconv.Itoa(paper) + "'s work"
	}
	return parts[0] + "; " + here
}

// paperSoftIRQCore is the core of the study's baseline core_softirq
// reference (client_core_softirq for a client node's) with the highest
// value: the core the paper's softirqs ran on.
func paperSoftIRQCore(refs []RefMatch, baseline string, client bool) (int, bool) {
	metric := results.MetricCoreSoftIRQ
	if client {
		metric = ClientCore(metric)
	}
	best, value, ok := 0, 0.0, false
	for _, m := range refs {
		r := m.Reference
		if r.Metric != metric || r.CPU == nil || r.Value == nil || r.Tuning != "" && r.Tuning != baseline {
			continue
		}
		if !ok || *r.Value > value {
			best, value, ok = *r.CPU, *r.Value, true
		}
	}
	return best, ok
}

// netRxCores are the cores that ran the most NET_RX softirqs, one per
// baseline cell at ref's point (its tuning set to the baseline, any
// core), in ascending order without repeats.
func netRxCores(ref study.Reference, rows []Row, baseline string, client bool) []int {
	at := ref
	at.CPU = nil
	if baseline != "" {
		at.Tuning = baseline
	}
	metric := results.MetricCoreNetRx
	if client {
		metric = ClientCore(metric)
	}
	best := map[results.Cell]Row{}
	for _, r := range rows {
		if r.Metric != metric || r.CPU < 0 || r.N == 0 || !(r.Mean > 0) || !refAt(at, r.SummaryRow) {
			continue
		}
		if b, ok := best[r.Cell]; !ok || r.Mean > b.Mean || r.Mean == b.Mean && r.CPU < b.CPU {
			best[r.Cell] = r
		}
	}
	var out []int
	for _, r := range best {
		if !slices.Contains(out, r.CPU) {
			out = append(out, r.CPU)
		}
	}
	slices.Sort(out)
	return out
}

// joinInts joins numbers with sep.
func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}
