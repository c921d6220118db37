package prove

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/results"
)

// polling is how much of the window the server node's cores spun in
// cpuidle's polling state on each side of the A/B, per cell, where the
// run measured it (results.MetricCorePoll): the cost a cpuIdle
// candidate's gain is paid with, which /proc/stat counts as idle time.
// Cells where neither side polled more than a tenth of a percent are
// left out: nothing was paid there.
func polling(m analysis.Model, a, b string, tunings bool) []advise.ProofPoll {
	side := func(c results.Cell) string {
		if tunings {
			return c.Tuning
		}
		return c.Datapath
	}
	type acc struct{ sum, n float64 }
	byCell := map[results.Cell]map[string]*acc{}
	var order []results.Cell
	for _, r := range m.Rows {
		s := side(r.Cell)
		if r.Metric != results.MetricCorePoll || r.CPU < 0 || r.N == 0 || (s != a && s != b) {
			continue
		}
		k := r.Cell
		k.Tuning, k.Datapath = "", ""
		if tunings {
			k.Datapath = r.Datapath
		} else {
			k.Tuning = r.Tuning
		}
		if byCell[k] == nil {
			byCell[k] = map[string]*acc{a: {}, b: {}}
			order = append(order, k)
		}
		byCell[k][s].sum += r.Mean
		byCell[k][s].n++
	}
	var out []advise.ProofPoll
	for _, k := range order {
		sa, sb := byCell[k][a], byCell[k][b]
		if sa.n == 0 || sb.n == 0 {
			continue
		}
		p := advise.ProofPoll{Datapath: k.Datapath, Impairment: k.Impairment, Workload: k.Workload, Replicas: k.Replicas,
			A: sa.sum / sa.n, B: sb.sum / sb.n}
		if max(p.A, p.B) > 0.1 {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(x, y advise.ProofPoll) int { return x.Replicas - y.Replicas })
	// As apart does for the cells: name a datapath or impairment only
	// where the A/B had several.
	blankSingle(out, func(c *advise.ProofPoll) *string { return &c.Datapath }, func(c *advise.ProofPoll) *string { return &c.Impairment })
	return out
}

// pollingText says what the cores paid in polling on each side.
func pollingText(p *advise.Proof) string {
	if len(p.Polling) == 0 {
		return ""
	}
	var parts []string
	for _, c := range p.Polling {
		parts = append(parts, fmt.Sprintf("%s %.1f%% with %s, %.1f%% with %s", c.Where(), c.A, p.A, c.B, p.B))
	}
	return ". The server node's cores spun in the polling idle state (counted as idle by the kernel, mean over its cores): " +
		strings.Join(parts, "; ")
}
