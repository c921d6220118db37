package adaptive

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/stats"
)

// A cell's status and decision from its own trials and its baseline's.

// judge is a cell's status from its own trials: target met, maximum
// reached, or running. b is its baseline's index (-1 for none); a
// baseline with cells (isBase) under a normalized target has no target
// of its own.
func judge(cfg Config, c Cell, cells []Cell, b int, isBase bool) CellPlan {
	p := CellPlan{ID: c.ID, Status: Running, N: len(c.Obs), HalfWidth: math.NaN()}
	from := c.Hold.Minimum(cfg.Trials)
	var x []float64
	c.Obs, x = byRound(c.Obs)
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			p.Valid++
		}
	}
	mean := stats.Describe(finite(x))
	p.HalfWidth = stats.RelHalfWidth(mean.Mean, mean.CI95Low, mean.CI95High)
	if mean.Degenerate {
		p.HalfWidth = math.NaN()
	}
	what := "the mean"
	if b >= 0 {
		bx, split := alignRounds(c.Obs, cells[b].Obs)
		cmp := compareAt(x, bx, split, cfg, stats.Confidence)
		p.Comparison = &cmp
		p.Decision = stats.Decision{Verdict: stats.Undecided, Reason: fmt.Sprintf("no decision before %d trials", from)}
		if h := c.held(cfg.Trials); h != "" {
			p.Decision.Reason = h
		}
		if n := lastLook(cfg.Trials, from, p.N); n > 0 {
			seq := compareAt(x[:n], bx[:n], split[:n], cfg, DecisionConfidence(cfg.Trials))
			p.Sequential, p.Look = &seq, n
			p.Decision = seq.Decision
			p.Decision.Reason = fmt.Sprintf("after %s, at %s confidence: %s", TrialCount(n), stats.LevelText(DecisionConfidence(cfg.Trials)), seq.Decision.Reason)
		}
		if cfg.Precision != nil && cfg.Precision.Of == OfNormalized {
			ch := cmp.Chosen
			p.HalfWidth = stats.RelHalfWidth(ch.Ratio, ch.Low, ch.High)
			what = "the ratio to " + cells[b].ID + " (" + string(ch.Method) + ")"
		}
	}
	hw := "none yet"
	if !math.IsNaN(p.HalfWidth) {
		hw = fmt.Sprintf("±%.2f%%", 100*p.HalfWidth)
	}
	var met []string
	if pr := cfg.Precision; pr != nil && !(isBase && pr.Of == OfNormalized) && p.HalfWidth <= pr.HalfWidth {
		met = append(met, fmt.Sprintf("%s of %s reached ±%.2f%% (target ±%.2f%%)", pr.Metric, what, 100*p.HalfWidth, 100*pr.HalfWidth))
	}
	// A decision stops a cell only in an adaptive design: a fixed one
	// runs its count whatever is decided, and its status says whether
	// the count met the precision target (target) or not (max).
	if p.Comparison != nil && cfg.Margin > 0 && !cfg.Trials.Fixed() && lastLook(cfg.Trials, from, p.N) == p.N && p.Decision.Verdict != stats.Undecided {
		met = append(met, fmt.Sprintf("decision %s %s", p.Decision.Verdict, p.Decision.Reason))
	}
	futile := ""
	if len(met) == 0 && cfg.Precision == nil {
		futile = futility(cfg, p, from)
	}
	switch {
	case c.Failed != "":
		p.Status, p.Reason = Failed, "given up: "+c.Failed
	case p.N >= from && len(met) > 0:
		p.Status, p.Reason = Target, strings.Join(met, "; ")
	case futile != "":
		p.Status, p.Reason = Futile, futile
	case p.N >= cfg.Trials.Max:
		p.Status, p.Reason = Max, fmt.Sprintf("ran the maximum of %s; half-width %s", TrialCount(cfg.Trials.Max), hw)
	case p.N < from:
		p.Reason = fmt.Sprintf("%d of at least %d trials", p.N, from)
	case cfg.Precision == nil && (cfg.Margin == 0 || b < 0):
		p.Reason = fmt.Sprintf("no target: runs to the maximum of %s", TrialCount(cfg.Trials.Max))
	default:
		p.Reason = "half-width " + hw
		if p.Comparison != nil && cfg.Margin > 0 {
			p.Reason += "; undecided " + p.Decision.Reason
		}
	}
	return p
}

// byRound returns a cell's trials in round order and their values.
func byRound(obs []Obs) ([]Obs, []float64) {
	obs = append([]Obs(nil), obs...)
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].Round < obs[j].Round })
	x := make([]float64, len(obs))
	for k, o := range obs {
		x[k] = o.Value
	}
	return obs, x
}

// alignRounds returns the baseline's values from the rounds this cell
// ran, in the same order (NaN where the baseline lacks that round): a
// stopped cell's comparison never changes. split marks the rounds whose
// two trials are of different parts of the run (Obs.Part).
func alignRounds(cell, base []Obs) (bx []float64, split []bool) {
	byRound := map[int]Obs{}
	for _, o := range base {
		byRound[o.Round] = o
	}
	bx, split = make([]float64, len(cell)), make([]bool, len(cell))
	for k, o := range cell {
		b, ok := byRound[o.Round]
		bx[k], split[k] = b.Value, ok && b.Part != o.Part
		if !ok {
			bx[k] = math.NaN()
		}
	}
	return bx, split
}

// compareAt is stats.CompareAt of a cell's values x with its baseline's
// bx by round, where a split round is no pair (stats.CompareSplitAt):
// trial k of both cells ran together but for a kill, cleanup and
// --resume between them, maybe hours apart: the drift pairing cancels
// is not shared there.
func compareAt(x, bx []float64, split []bool, cfg Config, conf float64) stats.Comparison {
	return stats.CompareSplitAt(x, bx, split, cfg.Margin, cfg.Direction, conf)
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}
