// Package impair describes network impairments (a netem specification),
// validates them, carries the seed-003 paper's Table II as presets, and
// installs, reads back and reverts them on a device inside a network
// namespace.
//
// Design notes:
//
//   - A Spec is pure data in human units (durations, percent, bit/s). It
//     validates without root, with one error per bad field, naming it.
//     Bounds are the kernel's (net/sched/sch_netem.c, kernel 6.x): delay
//     and jitter are s64 nanoseconds (TCA_NETEM_LATENCY64/JITTER64) but
//     netem silently caps jitter at INT_MAX ns (≈2.147 s, what tabledist
//     can draw from), and kernels before 4.15 and the legacy qopt field
//     hold delay as u32 ticks of 64 ns (≈274.9 s); a Spec beyond either is
//     refused rather than installed as something else.
//   - The netem options are encoded here (encode.go), not by
//     vishvananda/netlink's Netem: v1.3.1 has no delay distribution table
//     (TCA_NETEM_DELAY_DIST), no Gilbert-Elliott loss (TCA_NETEM_LOSS), no
//     64-bit delay and its parser drops all three on read-back. The request
//     is what `tc qdisc add ... netem` (iproute2 tc/q_netem.c) sends,
//     probabilities rounded as tc rounds them, so a preset installs the
//     same bits as the paper's tc command line (tc_test.go compares it
//     with captured tc requests; ours adds the 64-bit delay and jitter).
//   - Distribution tables (normal, pareto, paretonormal) are computed in
//     Go exactly as iproute2's netem/*.c generators compute the .dist
//     files, so no /usr/lib/tc is needed (this machine has none).
//   - The kernel does not dump the distribution table: ReadBack cannot
//     tell uniform from normal; Matches ignores the distribution.
package impair

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Distribution is the shape of the delay's random variation.
type Distribution string

// Distributions. Uniform is netem's default (no table sent): the paper's
// "uniform random variation of ±1 ms".
const (
	Uniform      Distribution = ""
	Normal       Distribution = "normal"
	Pareto       Distribution = "pareto"
	ParetoNormal Distribution = "paretonormal"
)

// Distributions lists the valid names, uniform first ("uniform" and ""
// both mean Uniform).
func Distributions() []Distribution { return []Distribution{"uniform", Normal, Pareto, ParetoNormal} }

// Spec is one netem configuration. The zero Spec is "no impairment".
// Percentages are 0..100.
type Spec struct {
	// Delay is added to every packet; Jitter varies it by ±Jitter (the
	// shape given by Distribution), DelayCorrelation makes each draw
	// depend on the previous one (tc: delay 10ms 1ms 25%).
	Delay            time.Duration
	Jitter           time.Duration
	DelayCorrelation float64
	Distribution     Distribution

	// Loss drops packets at random (tc: loss random 5% [corr]). GE
	// replaces it by the Gilbert-Elliott state model; both at once is an
	// error, as in tc.
	Loss            float64
	LossCorrelation float64
	GE              *GilbertElliott

	// Corrupt flips a random bit in that share of packets.
	Corrupt            float64
	CorruptCorrelation float64

	// Duplicate sends that share of packets twice.
	Duplicate            float64
	DuplicateCorrelation float64

	// Reorder sends that share of packets at once (without the delay), so
	// they overtake the delayed ones; Gap sends every Gap-th packet so
	// (tc: reorder 25% 50% gap 5). Needs a delay.
	Reorder            float64
	ReorderCorrelation float64
	Gap                uint32

	// Rate limits the emulated link, in bit/s (netem counts bytes/s, so
	// a multiple of 8); 0 is unlimited.
	Rate uint64

	// Limit is netem's queue length in packets; 0 means tc's default,
	// DefaultLimit. It bounds delay x rate: at 500 ms and 1000 packets a
	// flow gets at most 1000 packets per 500 ms.
	Limit uint32
}

// GilbertElliott is the two-state loss model (tc: loss gemodel P R 1-H
// 1-K): the channel moves good->bad with probability P and bad->good with
// R per packet, and loses BadLoss % of packets in the bad state and
// GoodLoss % in the good one. tc's defaults: R = 100-P, BadLoss 100,
// GoodLoss 0 (the simple Gilbert model).
type GilbertElliott struct {
	P        float64
	R        float64
	BadLoss  float64
	GoodLoss float64
}

// DefaultLimit is tc's default netem queue length, in packets.
const DefaultLimit = 1000

// Kernel bounds (see the package notes).
const (
	// MaxJitter is the largest jitter netem applies as given.
	MaxJitter = time.Duration(math.MaxInt32)
	// MaxDelay is the largest delay the u32 tick field holds.
	MaxDelay = time.Duration(math.MaxUint32) * psched
	// psched is the kernel's packet scheduler tick (PSCHED_SHIFT 6).
	psched = 64 * time.Nanosecond
)

// IsZero reports whether s impairs nothing (the preset "none").
func (s Spec) IsZero() bool { return s == Spec{} }

// ErrInvalid is wrapped by every validation error, for errors.Is.
var ErrInvalid = errors.New("invalid impairment")

// FieldError is a bad value of one field; Field is the study key
// (delay, jitter, loss, ...).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }
func (e *FieldError) Unwrap() error { return ErrInvalid }

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Validate returns the first bad field, as a *FieldError.
func (s Spec) Validate() error {
	switch {
	case s.Delay < 0:
		return bad(FieldDelay, "%v is negative", s.Delay)
	case s.Delay > MaxDelay:
		return bad(FieldDelay, "%v is above netem's maximum %v (u32 ticks of 64 ns)", s.Delay, MaxDelay)
	case s.Jitter < 0:
		return bad(FieldJitter, "%v is negative", s.Jitter)
	case s.Jitter > MaxJitter:
		return bad(FieldJitter, "%v is above netem's maximum %v (the kernel caps jitter at 2^31-1 ns)", s.Jitter, MaxJitter)
	case s.Jitter > 0 && s.Delay == 0:
		return bad(FieldJitter, "%v needs a delay (jitter varies the delay)", s.Jitter)
	}
	if err := s.Distribution.validate(); err != nil {
		return err
	}
	if s.normalized().Distribution != Uniform && s.Jitter == 0 {
		return bad(FieldDistribution, "%s needs a delay and a jitter (it shapes the jitter)", s.Distribution)
	}
	for _, p := range []struct {
		field string
		v     float64
	}{
		{FieldDelayCorrelation, s.DelayCorrelation},
		{FieldLoss, s.Loss}, {FieldLossCorrelation, s.LossCorrelation},
		{FieldCorrupt, s.Corrupt}, {FieldCorruptCorrelation, s.CorruptCorrelation},
		{FieldDuplicate, s.Duplicate}, {FieldDuplicateCorrelation, s.DuplicateCorrelation},
		{FieldReorder, s.Reorder}, {FieldReorderCorrelation, s.ReorderCorrelation},
	} {
		if err := percent(p.field, p.v); err != nil {
			return err
		}
	}
	needs := []struct {
		field string
		set   bool
		need  bool
		what  string
	}{
		{FieldDelayCorrelation, s.DelayCorrelation > 0, s.Jitter > 0, "a jitter (it correlates the jitter)"},
		{FieldLossCorrelation, s.LossCorrelation > 0, s.Loss > 0, "a random loss"},
		{FieldCorruptCorrelation, s.CorruptCorrelation > 0, s.Corrupt > 0, "a corruption"},
		{FieldDuplicateCorrelation, s.DuplicateCorrelation > 0, s.Duplicate > 0, "a duplication"},
		{FieldReorderCorrelation, s.ReorderCorrelation > 0, s.Reorder > 0, "a reordering"},
		{FieldReorder, s.Reorder > 0, s.Delay > 0, "a delay (reordered packets skip the delay; without one nothing is reordered)"},
		{FieldGap, s.Gap > 0, s.Reorder > 0, "a reordering"},
	}
	for _, n := range needs {
		if n.set && !n.need {
			return bad(n.field, "needs %s", n.what)
		}
	}
	if s.GE != nil {
		if s.Loss > 0 {
			return bad(FieldLossModel, "gemodel and a random loss are exclusive (netem has one loss model)")
		}
		if err := s.GE.validate(); err != nil {
			return err
		}
	}
	if s.Rate%8 != 0 {
		return bad(FieldRate, "%d bit/s is not a whole number of bytes per second (netem counts bytes)", s.Rate)
	}
	return nil
}

func (g GilbertElliott) validate() error {
	for _, p := range []struct {
		field string
		v     float64
	}{{"p", g.P}, {"r", g.R}, {"bad_loss", g.BadLoss}, {"good_loss", g.GoodLoss}} {
		if err := percent(FieldLossModel+"."+p.field, p.v); err != nil {
			return err
		}
	}
	if g.P == 0 {
		return bad(FieldLossModel+".p", "0%% never enters the bad state; leave the loss model out")
	}
	return nil
}

func percent(field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 100 {
		return bad(field, "%s is out of range 0..100%%", formatPercent(v))
	}
	return nil
}

func (d Distribution) validate() error {
	switch d {
	case Uniform, "uniform", Normal, Pareto, ParetoNormal:
		return nil
	}
	names := make([]string, 0, 4)
	for _, x := range Distributions() {
		names = append(names, string(x))
	}
	return bad(FieldDistribution, "unknown distribution %q (one of %s)", string(d), strings.Join(names, ", "))
}

// normalized fills tc's defaults, so equal configurations compare equal.
func (s Spec) normalized() Spec {
	if s.Limit == 0 {
		s.Limit = DefaultLimit
	}
	if s.Distribution == "uniform" {
		s.Distribution = Uniform
	}
	if s.Reorder > 0 && s.Gap == 0 {
		s.Gap = 1 // tc does the same; netem needs gap >= 1 to reorder
	}
	return s
}

// Field names, as a study file writes them.
const (
	FieldDelay                = "delay"
	FieldJitter               = "jitter"
	FieldDelayCorrelation     = "delay_correlation"
	FieldDistribution         = "distribution"
	FieldLoss                 = "loss"
	FieldLossCorrelation      = "loss_correlation"
	FieldLossModel            = "gemodel"
	FieldCorrupt              = "corrupt"
	FieldCorruptCorrelation   = "corrupt_correlation"
	FieldDuplicate            = "duplicate"
	FieldDuplicateCorrelation = "duplicate_correlation"
	FieldReorder              = "reorder"
	FieldReorderCorrelation   = "reorder_correlation"
	FieldGap                  = "gap"
	FieldRate                 = "rate"
	FieldLimit                = "limit"
)
