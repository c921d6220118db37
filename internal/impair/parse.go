package impair

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/suggest"
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
		return p.rate(s)
	default:
		return fmt.Errorf("unknown netem keyword %q", kw)
	}
	return err
}

// rate reads tc's rate RATE; its [PACKETOVERHEAD [CELLSIZE
// [CELLOVERHEAD]]] are refused as such (a stray number is no delay).
func (p *parser) rate(s *Spec) error {
	t, err := p.arg(FieldRate)
	if err != nil {
		return err
	}
	if s.Rate, err = ParseRate(t); err != nil {
		return bad(FieldRate, "%v", err)
	}
	if _, ok := p.optNumber(); ok {
		return bad(FieldRate, "a packet overhead, cell size or cell overhead after the rate is not supported")
	}
	return nil
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
		return fmt.Errorf("unknown impairment field %q (%sone of %s)", key, suggest.Hint(key, Fields()), strings.Join(Fields(), ", "))
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
