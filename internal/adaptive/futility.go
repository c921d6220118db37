package adaptive

import (
	"fmt"
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// futility says why a cell compared with a baseline should stop
// undecided, or "" when more rounds might still decide it. At a look
// (of a cell stopping on nothing of its own before from trials)
// before Trials.Max, with the decision undecided, the interval it was
// judged on is shrunk around its estimate to what Max trials would give
// if the estimate and the spread held: by √(n/Max) for the standard
// error and by t(df at Max)/t(df now) for the quantile (at n = 3 the t
// quantile alone is 2 to 3 times that at 20; leaving it out stopped
// cells a fixed 20-trial design decides). If that interval still
// decides nothing, the cell stops as Futile. The rule only ever stops a
// cell that is undecided, so it cannot add a wrong "better" or "worse";
// its risk is the other one: a small real difference a few more rounds
// might have shown is reported undecided (the report says "futile").
func futility(cfg Config, p CellPlan, from int) string {
	if cfg.Margin <= 0 || p.Sequential == nil || p.Decision.Verdict != stats.Undecided ||
		p.N >= cfg.Trials.Max || 2*p.N < cfg.Trials.Max || lastLook(cfg.Trials, from, p.N) != p.N {
		return ""
	}
	ci := p.Sequential.Chosen.RatioCI
	if ci.Method == stats.MethodNone || math.IsNaN(ci.Low) || math.IsNaN(ci.High) || math.IsNaN(ci.Ratio) {
		return ""
	}
	proj := project(cfg, ci, p.N, cfg.Trials.Max)
	if stats.Decide(proj, cfg.Margin, cfg.Direction).Verdict != stats.Undecided {
		return ""
	}
	return fmt.Sprintf("futile after %d trials: at %d the interval would still be about [%.3f, %.3f], covering 1 and reaching beyond the ±%.3g%% margin",
		p.N, cfg.Trials.Max, proj.Low, proj.High, 100*cfg.Margin)
}

// project shrinks ci, the interval judged at n trials, around its
// estimate to what m trials would give if the estimate and the spread
// held: by √(n/m) for the standard error and by t(df at m)/t(df at n)
// for the quantile, at the looks' confidence.
func project(cfg Config, ci stats.RatioCI, n, m int) stats.RatioCI {
	conf := DecisionConfidence(cfg.Trials)
	return projectAt(ci, n, m, conf, conf)
}

// projectAt is project for an interval judged at confidence now,
// projected to one judged at confidence then (a rerun's design).
func projectAt(ci stats.RatioCI, n, m int, now, then float64) stats.RatioCI {
	df := ci.DF
	if math.IsNaN(df) || df < 1 {
		df = float64(n - 1)
	}
	k := math.Sqrt(float64(n)/float64(m)) * stats.TQuantileAt(df+float64(m-n), then) / stats.TQuantileAt(df, now)
	proj := ci
	proj.Low, proj.High = ci.Ratio-(ci.Ratio-ci.Low)*k, ci.Ratio+(ci.High-ci.Ratio)*k
	return proj
}

// ToDecideCalibration is how often a rerun with maximum TrialsToDecide
// decided such a cell in simulation (TestTrialsToDecideCalibration), for
// the texts that quote the estimate.
const ToDecideCalibration = "51-84%"

// TrialsToDecide is about how many trials an undecided cell would need
// for a decision at the looks' confidence if its estimate and spread
// held (the projection futility uses), for a user deciding whether a
// longer run is worth it; 0 when the cell is decided, has no interval
// yet, or no count up to limit would decide it. The projection narrows
// as the count grows, so the first deciding count is found by bisection.
// A held cell (CellPlan.HeldTo) needs at least FewValuedTrials: a run
// whose maximum cut its hold judged it sooner, and its estimate of 6 or
// 7 would be a rerun that cuts the hold again.
func TrialsToDecide(cfg Config, p CellPlan, limit int) int {
	if cfg.Margin <= 0 || p.Sequential == nil || p.Look < 2 || p.Decision.Verdict != stats.Undecided {
		return 0
	}
	ci := p.Sequential.Chosen.RatioCI
	if ci.Method == stats.MethodNone || math.IsNaN(ci.Low) || math.IsNaN(ci.High) || math.IsNaN(ci.Ratio) {
		return 0
	}
	// A rerun with maximum m judges its last look at its own design's
	// confidence: more looks, each stricter, for an adaptive design
	// (1 - 0.05/K), 95% for a fixed one. Projecting at this run's level
	// instead made the estimates lean low.
	now := DecisionConfidence(cfg.Trials)
	decides := func(m int) bool {
		rerun := Trials{Min: min(cfg.Trials.Min, m), Max: m}
		if cfg.Trials.Fixed() {
			rerun.Min = m
		}
		proj := projectAt(ci, p.Look, m, now, DecisionConfidence(rerun))
		return stats.Decide(proj, cfg.Margin, cfg.Direction).Verdict != stats.Undecided
	}
	lo, hi := p.Look, limit // decides(lo) is false; find the least m with decides(m)
	if hi <= lo || !decides(hi) {
		return 0
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if p.HeldTo > 0 {
		return max(hi, FewValuedTrials)
	}
	return hi
}
