package impair

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Human units of the parsers: times, percentages, counts, rates.

var timeUnits = map[string]string{
	"ns": "ns", "nsec": "ns", "nsecs": "ns",
	"us": "us", "usec": "us", "usecs": "us", "µs": "µs",
	"ms": "ms", "msec": "ms", "msecs": "ms",
	"s": "s", "sec": "s", "secs": "s",
}

func isTimeUnit(s string) bool { _, ok := timeUnits[strings.ToLower(s)]; return ok }

func isNumber(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[0] == '-' && len(s) > 1 && s[1] >= '0' && s[1] <= '9')
}

// numberEnd is the length of the number s begins with: digits, a point,
// a sign, and an exponent (1e3ms, which tc reads with strtod; the e is
// no unit's first letter).
func numberEnd(s string) int {
	i := 0
	digit := func(j int) bool { return j < len(s) && s[j] >= '0' && s[j] <= '9' }
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && (digit(i) || s[i] == '.') {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		if digit(j) {
			for i = j; digit(i); i++ {
			}
		}
	}
	return i
}

// parseTime reads "10ms", "1.5s", "100usec": a number and a unit.
func parseTime(field, s string) (time.Duration, error) {
	i := numberEnd(s)
	if i <= 0 || i == len(s) {
		return 0, bad(field, "%q needs a number and a unit (ns, us, ms, s)", s)
	}
	unit, ok := timeUnits[strings.ToLower(s[i:])]
	if !ok {
		return 0, bad(field, "%q: unknown time unit %q (ns, us, ms, s)", s, s[i:])
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, bad(field, "%q is not a time", s)
	}
	scale := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}[unit]
	ns := math.Round(v * scale)
	if math.Abs(ns) > math.MaxInt64/2 {
		return 0, bad(field, "%q is out of range", s)
	}
	return time.Duration(ns), nil
}

// parsePercent reads "25%" (or "25" when the % is optional) as 25.
func parsePercent(field, s string, needSign bool) (float64, error) {
	t, had := strings.CutSuffix(strings.TrimSpace(s), "%")
	if needSign && !had {
		return 0, bad(field, "%q needs a %% sign (1%% is one packet in a hundred)", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil {
		return 0, bad(field, "%q is not a percentage", s)
	}
	return v, percent(field, v)
}

func parseCount(field, s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, bad(field, "%q is not a whole number 0..%d", s, uint32(math.MaxUint32))
	}
	return uint32(v), nil
}

func parseDistribution(s string) (Distribution, error) {
	d := Distribution(strings.ToLower(s))
	if d == "uniform" {
		d = Uniform
	}
	return d, d.validate()
}

// rateUnits are tc's (tc-rate: bit-based SI units, *bps are bytes).
var rateUnits = []struct {
	suffix string
	mult   float64
}{
	{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3},
	{"tibit", 1 << 40}, {"gibit", 1 << 30}, {"mibit", 1 << 20}, {"kibit", 1 << 10},
	{"tbps", 8e12}, {"gbps", 8e9}, {"mbps", 8e6}, {"kbps", 8e3}, {"bps", 8},
	{"bit", 1},
}

// ParseRate reads a tc rate ("100mbit", "1gbit", "125kbps") into bit/s.
func ParseRate(s string) (uint64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(l, u.suffix)
		if !ok || num == "" || strings.HasSuffix(num, "i") {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 || math.IsNaN(v) || v*u.mult >= 1<<63 {
			return 0, fmt.Errorf("%q is not a rate", s)
		}
		return uint64(math.Round(v * u.mult)), nil
	}
	return 0, fmt.Errorf("%q needs a rate unit (bit, kbit, mbit, gbit, or bytes: bps, kbps, mbps)", s)
}
