package impair

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// String renders s in tc's syntax; Parse(s.String()) installs the same.
func (s Spec) String() string {
	if s.IsZero() {
		return "none"
	}
	var b []string
	add := func(f string, a ...any) { b = append(b, fmt.Sprintf(f, a...)) }
	if s.Delay != 0 || s.Jitter != 0 {
		add("delay %s", fmtTime(s.Delay))
		if s.Jitter != 0 || s.DelayCorrelation != 0 {
			add("%s", fmtTime(s.Jitter))
			if s.DelayCorrelation != 0 {
				add("%s", formatPercent(s.DelayCorrelation))
			}
		}
	}
	if d := s.normalized().Distribution; d != Uniform {
		add("distribution %s", d)
	}
	if g := s.GE; g != nil {
		add("loss gemodel %s %s %s %s", formatPercent(g.P), formatPercent(g.R), formatPercent(g.BadLoss), formatPercent(g.GoodLoss))
	}
	pair := func(kw string, v, c float64) {
		if v == 0 && c == 0 {
			return
		}
		add("%s %s", kw, formatPercent(v))
		if c != 0 {
			add("%s", formatPercent(c))
		}
	}
	pair("loss", s.Loss, s.LossCorrelation)
	pair("corrupt", s.Corrupt, s.CorruptCorrelation)
	pair("duplicate", s.Duplicate, s.DuplicateCorrelation)
	pair("reorder", s.Reorder, s.ReorderCorrelation)
	if s.Gap != 0 {
		add("gap %d", s.Gap)
	}
	if s.Rate != 0 {
		add("rate %dbit", s.Rate)
	}
	if s.Limit != 0 {
		add("limit %d", s.Limit)
	}
	return strings.Join(b, " ")
}

// fmtTime writes d in the largest unit that keeps it whole ("10ms").
func fmtTime(d time.Duration) string {
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

func formatPercent(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + "%" }
