package adaptive

import (
	"fmt"
	"math"

	"github.com/cnibench/cnibench/internal/stats"
)

// futility says why a cell compared with a baseline should stop
// undecided, or "" when more rounds might still decide it. At a look
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
func futility(cfg Config, p CellPlan) string {
	if cfg.Margin <= 0 || p.Sequential == nil || p.Decision.Verdict != stats.Undecided ||
		p.N >= cfg.Trials.Max || 2*p.N < cfg.Trials.Max || lastLook(cfg.Trials, p.N) != p.N {
		return ""
	}
	ci := p.Sequential.Chosen.RatioCI
	if ci.Method == stats.MethodNone || math.IsNaN(ci.Low) || math.IsNaN(ci.High) || math.IsNaN(ci.Ratio) {
		return ""
	}
	conf := DecisionConfidence(cfg.Trials)
	df := ci.DF
	if math.IsNaN(df) || df < 1 {
		df = float64(p.N - 1)
	}
	k := math.Sqrt(float64(p.N)/float64(cfg.Trials.Max)) *
		stats.TQuantileAt(df+float64(cfg.Trials.Max-p.N), conf) / stats.TQuantileAt(df, conf)
	proj := ci
	proj.Low, proj.High = ci.Ratio-(ci.Ratio-ci.Low)*k, ci.Ratio+(ci.High-ci.Ratio)*k
	if stats.Decide(proj, cfg.Margin, cfg.Direction).Verdict != stats.Undecided {
		return ""
	}
	return fmt.Sprintf("futile after %d trials: at %d the interval would still be about [%.3f, %.3f], covering 1 and reaching beyond the ±%.3g%% margin",
		p.N, cfg.Trials.Max, proj.Low, proj.High, 100*cfg.Margin)
}
