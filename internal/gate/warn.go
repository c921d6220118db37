package gate

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cnibench/cnibench/internal/stats"
)

// Warning says when a rule fails on an improvement of its metric (by
// stats.DirectionOf): a positive threshold under "<" ('bitrate < 5%'
// fails on a +2% rise), or a rule in the direction the metric improves
// ('rtt_us < -10%' fails when latency falls). Such a rule is legitimate
// ("must improve by 5%"), so it is not refused, but it is most often a
// slip of the sign in a regression gate, which would then fail CI on
// good changes; "" for a rule that fails on regressions only.
func (r Rule) Warning() string {
	up := stats.DirectionOf(r.Metric) == stats.HigherIsBetter
	var tail string
	switch {
	case r.Below != up:
		better := "lower"
		if up {
			better = "higher"
		}
		tail = fmt.Sprintf("an improvement (%s is better %s)", r.Metric, better)
	case r.Below && r.Change > 0, !r.Below && r.Change < 0:
		tail = "improvements included"
	default:
		return ""
	}
	return fmt.Sprintf("rule '%s' fails when %s %s, %s; for a regression gate write '%s'", r.Text, r.Metric, failsWhen(r, r.Below != up), tail,
		regression(r, up))
}

// failsWhen is the change a rule fails on, in words: "rises by less
// than 5%", "falls by more than 10%". whole adds the side past zero
// ("or falls"), which a rule in the direction of improvement must name:
// there it is the improvement.
func failsWhen(r Rule, whole bool) string {
	p := r.amount(math.Abs(r.Change))
	switch {
	case r.Change == 0 && r.Below:
		return "falls"
	case r.Change == 0:
		return "rises"
	case r.Below && r.Change < 0:
		return "falls by more than " + p
	case r.Below && whole:
		return "rises by less than " + p + " or falls"
	case r.Below:
		return "rises by less than " + p
	case r.Change > 0:
		return "rises by more than " + p
	case whole:
		return "falls by less than " + p + " or rises"
	}
	return "falls by less than " + p
}

// regression is the rule of r's size that fails on a regression of its
// metric only: a fall of one better higher, a rise of one better lower.
func regression(r Rule, up bool) string {
	metric, change := r.Metric, r.Change
	p := r.amount(math.Abs(change))
	if change == 0 {
		p = r.amount(0)
	} else if up {
		p = "-" + p
	} else {
		p = "+" + p
	}
	if up {
		return metric + " < " + p
	}
	return metric + " > " + p
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'g', 4, 64) + "%" }

// amount is a size of r's threshold as the rule writes it: a percentage,
// or for an absolute rule the number in the metric's unit.
func (r Rule) amount(f float64) string {
	if r.Absolute {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return percent(f)
}
