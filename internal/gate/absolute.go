package gate

import (
	"fmt"
	"strconv"

	"github.com/cnibench/cnibench/internal/stats"
)

// judgeDifference judges an absolute rule (Rule.Absolute) on a cell with
// an interval: B − A's interval at v.Level (Welch's, stats.DiffAt)
// excluding 0 is significant, and a difference past the threshold, in
// the metric's unit, fails. It needs no A away from 0, which a count
// that is usually 0 is not: there a relative threshold cannot be
// applied. v is the verdict so far (judged, at its level).
func judgeDifference(r Rule, c Cell, v Verdict) Verdict {
	d, lo, hi := stats.DiffAt(c.B, c.A, v.Level)
	v.Change, v.Low, v.High = d, lo, hi
	shown := fmt.Sprintf("%s interval of B − A [%s, %s]", levelText(v.Level), signed(c, lo), signed(c, hi))
	diff, threshold := diffApart(c, d, r.Change)
	switch {
	case !(lo > 0 || hi < 0):
		v.Why = "not significant: " + shown
	case r.Below && d < r.Change, !r.Below && d > r.Change:
		v.Fail = true
		v.Why = fmt.Sprintf("difference %s is significant (%s) and beyond %s", diff, shown, threshold)
	default:
		v.Why = fmt.Sprintf("significant difference %s (%s) within the threshold %s", diff, shown, threshold)
	}
	return v
}

// signed shows a difference as the cell shows values, with its sign.
func signed(c Cell, x float64) string {
	s := showMean(c, x)
	if x > 0 {
		s = "+" + s
	}
	return s
}

// diffApart shows a difference and the threshold it is judged against
// as the cell shows values, or as plain numbers in the samples' unit
// where those read alike for values that differ (a count's 50.04 and 50
// read "+50.0"), as pctApart does for changes.
func diffApart(c Cell, d, threshold float64) (string, string) {
	x, y := signed(c, d), signed(c, threshold)
	if x == y && d != threshold {
		f := func(v float64) string {
			s := strconv.FormatFloat(v, 'g', -1, 64)
			if v > 0 {
				s = "+" + s
			}
			return s
		}
		return f(d), f(threshold)
	}
	return x, y
}
