package impair

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Parse reads a netem configuration in tc's syntax (what follows
// `tc qdisc add dev DEV root netem`), as Table II writes it:
//
//	delay 10ms 1ms 25% distribution normal loss 5% corrupt 5%
//	10 ms 1ms 25% - loss 5%          (Table II: a bare time is a delay)
//	loss gemodel 1% 10% 70% 0.1%     (P R 1-H 1-K)
//	reorder 25% 50% gap 5 rate 100mbit limit 10000 duplicate 1%
//
// Times need a unit (ns, us, ms, s; tc's "msec", "usec", "sec" too and
// "10 ms" with a space); percentages may omit the % as in tc. The result
// is validated. "none" (and the empty text) is the zero Spec.
func Parse(text string) (Spec, error) {
	if strings.TrimSpace(text) == "none" {
		return Spec{}, nil
	}
	p := &parser{toks: tokens(text)}
	s, err := p.spec()
	if err != nil {
		return Spec{}, err
	}
	return s, s.Validate()
}

// tokens splits on blanks, joins "10 ms" into "10ms" and drops Table II's
// "-" separators and a leading "netem".
func tokens(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		if f == "-" || (len(out) == 0 && f == "netem") {
			continue
		}
		if n := len(out); n > 0 && isNumber(out[n-1]) && isTimeUnit(f) {
			out[n-1] += f
			continue
		}
		out = append(out, f)
	}
	return out
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) next() (string, bool) {
	if p.i >= len(p.toks) {
		return "", false
	}
	p.i++
	return p.toks[p.i-1], true
}

// optNumber returns the next token if it is a number (tc's NEXT_IS_NUMBER).
func (p *parser) optNumber() (string, bool) {
	if p.i < len(p.toks) && isNumber(p.toks[p.i]) {
		return p.next()
	}
	return "", false
}

func (p *parser) arg(keyword string) (string, error) {
	t, ok := p.next()
	if !ok {
		return "", fmt.Errorf("%s: missing value", keyword)
	}
	return t, nil
}

func (p *parser) spec() (Spec, error) {
	var s Spec
	seen := map[string]bool{}
	for p.i < len(p.toks) {
		kw := strings.ToLower(p.toks[p.i])
		if isNumber(kw) && !seen[FieldDelay] {
			kw = "delay" // Table II's "10 ms 1ms 25%"
		} else {
			p.i++
		}
		switch kw {
		case "delay", "latency":
			kw = FieldDelay
		case "drop":
			kw = FieldLoss
		case "corruption":
			kw = FieldCorrupt
		}
		if seen[kw] {
			return Spec{}, fmt.Errorf("%s given twice", kw)
		}
		seen[kw] = true
		if err := p.keyword(&s, kw); err != nil {
			return Spec{}, err
		}
	}
	return s, nil
}

func (p *parser) keyword(s *Spec, kw string) error {
	var err error
	switch kw {
	case FieldDelay:
		var t string
		if t, err = p.arg(kw); err != nil {
			return err
		}
		if s.Delay, err = parseTime(kw, t); err != nil {
			return err
		}
		if t, ok := p.optNumber(); ok {
			if s.Jitter, err = parseTime(FieldJitter, t); err != nil {
				return err
			}
			if t, ok := p.optNumber(); ok {
				s.DelayCorrelation, err = parsePercent(FieldDelayCorrelation, t, false)
			}
		}
	case FieldDistribution:
		var t string
		if t, err = p.arg(kw); err != nil {
			return err
		}
		s.Distribution, err = parseDistribution(t)
	case FieldLoss:
		t, err := p.arg(kw)
		if err != nil {
			return err
		}
		switch t {
		case "random":
			if t, err = p.arg("loss random"); err != nil {
				return err
			}
		case "gemodel":
			return p.gemodel(s)
		case "state":
			return bad(FieldLoss, "the 4-state loss model (loss state) is not supported; use gemodel")
		}
		if s.Loss, err = parsePercent(FieldLoss, t, false); err != nil {
			return err
		}
		if t, ok := p.optNumber(); ok {
			s.LossCorrelation, err = parsePercent(FieldLossCorrelation, t, false)
		}
	case FieldCorrupt:
		s.Corrupt, s.CorruptCorrelation, err = p.pctPair(kw, FieldCorruptCorrelation)
	case FieldDuplicate:
		s.Duplicate, s.DuplicateCorrelation, err = p.pctPair(kw, FieldDuplicateCorrelation)
	case FieldReorder:
		s.Reorder, s.ReorderCorrelation, err = p.pctPair(kw, FieldReorderCorrelation)
	case FieldGap, FieldLimit:
		var t string
		if t, err = p.arg(kw); err != nil {
			return err
		}
		var v uint32
		if v, err = parseCount(kw, t); err != nil {
			return err
		}
		if kw == FieldGap {
			s.Gap = v
		} else {
			s.Limit = v
		}
	case FieldRate:
		var t string
		if t, err = p.arg(kw); err != nil {
			return err
		}
		s.Rate, err = ParseRate(t)
		if err != nil {
			err = bad(FieldRate, "%v", err)
		}
	default:
		return fmt.Errorf("unknown netem keyword %q", kw)
	}
	return err
}

func (p *parser) pctPair(kw, corrField string) (v, corr float64, err error) {
	t, err := p.arg(kw)
	if err != nil {
		return 0, 0, err
	}
	if v, err = parsePercent(kw, t, false); err != nil {
		return 0, 0, err
	}
	if t, ok := p.optNumber(); ok {
		corr, err = parsePercent(corrField, t, false)
	}
	return v, corr, err
}

// gemodel reads P [R [1-H [1-K]]] with tc's defaults.
func (p *parser) gemodel(s *Spec) error {
	t, err := p.arg("loss gemodel")
	if err != nil {
		return err
	}
	g, err := parseGE(t, p.optNumber)
	s.GE = g
	return err
}

func parseGE(first string, more func() (string, bool)) (*GilbertElliott, error) {
	f := FieldLossModel
	pv, err := parsePercent(f+".p", first, false)
	if err != nil {
		return nil, err
	}
	g := &GilbertElliott{P: pv, R: 100 - pv, BadLoss: 100}
	for _, dst := range []struct {
		name string
		v    *float64
	}{{"r", &g.R}, {"bad_loss", &g.BadLoss}, {"good_loss", &g.GoodLoss}} {
		t, ok := more()
		if !ok {
			break
		}
		if *dst.v, err = parsePercent(f+"."+dst.name, t, false); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// ParseField sets one field of s from a study file's human value:
// delay: 10ms, jitter: 1ms, loss: 1%, rate: 100mbit, limit: 1000,
// distribution: normal, gemodel: 1% 10% 70% 0.1%. Percentages need their
// "%" here (a bare 0.05 could mean either). It does not validate the
// whole Spec.
func ParseField(s *Spec, key, value string) error {
	value = strings.TrimSpace(value)
	var err error
	switch key {
	case FieldDelay:
		s.Delay, err = parseTime(key, strings.ReplaceAll(value, " ", ""))
	case FieldJitter:
		s.Jitter, err = parseTime(key, strings.ReplaceAll(value, " ", ""))
	case FieldDistribution:
		s.Distribution, err = parseDistribution(value)
	case FieldDelayCorrelation:
		s.DelayCorrelation, err = parsePercent(key, value, true)
	case FieldLoss:
		s.Loss, err = parsePercent(key, value, true)
	case FieldLossCorrelation:
		s.LossCorrelation, err = parsePercent(key, value, true)
	case FieldCorrupt:
		s.Corrupt, err = parsePercent(key, value, true)
	case FieldCorruptCorrelation:
		s.CorruptCorrelation, err = parsePercent(key, value, true)
	case FieldDuplicate:
		s.Duplicate, err = parsePercent(key, value, true)
	case FieldDuplicateCorrelation:
		s.DuplicateCorrelation, err = parsePercent(key, value, true)
	case FieldReorder:
		s.Reorder, err = parsePercent(key, value, true)
	case FieldReorderCorrelation:
		s.ReorderCorrelation, err = parsePercent(key, value, true)
	case FieldGap:
		s.Gap, err = parseCount(key, value)
	case FieldLimit:
		s.Limit, err = parseCount(key, value)
	case FieldRate:
		if s.Rate, err = ParseRate(value); err != nil {
			err = bad(key, "%v", err)
		}
	case FieldLossModel:
		f := strings.Fields(value)
		if len(f) == 0 || len(f) > 4 {
			return bad(key, "%q: want P [R [1-H [1-K]]]", value)
		}
		for _, x := range f {
			if !strings.HasSuffix(x, "%") {
				return bad(key, "%q: each probability needs a %% sign", value)
			}
		}
		i := 1
		s.GE, err = parseGE(f[0], func() (string, bool) {
			if i >= len(f) {
				return "", false
			}
			i++
			return f[i-1], true
		})
	default:
		return fmt.Errorf("unknown impairment field %q (one of %s)", key, strings.Join(Fields(), ", "))
	}
	return err
}

// Fields lists the keys ParseField accepts.
func Fields() []string {
	return []string{FieldDelay, FieldJitter, FieldDelayCorrelation, FieldDistribution,
		FieldLoss, FieldLossCorrelation, FieldLossModel, FieldCorrupt, FieldCorruptCorrelation,
		FieldDuplicate, FieldDuplicateCorrelation, FieldReorder, FieldReorderCorrelation, FieldGap,
		FieldRate, FieldLimit}
}

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

// parseTime reads "10ms", "1.5s", "100usec": a number and a unit.
func parseTime(field, s string) (time.Duration, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+') })
	if i <= 0 {
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
