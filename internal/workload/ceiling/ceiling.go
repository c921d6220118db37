// Package ceiling finds the highest offered rate whose loss stays under a
// ceiling, as seed 001 held pktgen's send rate so that UDP loss stayed
// under 3%. It bisects over short probes between a rate known to pass and
// one known to fail; the measured trials then run at the rate found.
//
// Why bisection and not a sweep: loss as a function of offered rate is
// monotone enough on one path (below the bottleneck it is ~0, above it
// grows with the excess), so each probe halves the interval, and the
// answer is within one resolution step of the bottleneck after
// log2((high-low)/step) probes.
package ceiling

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/cnibench/cnibench/internal/study"
)

// Probe offers rate (bit/s) for a short time and returns what it
// measured.
type Probe func(ctx context.Context, rate float64) (Outcome, error)

// Outcome is one probe's measurement.
type Outcome struct {
	// LossPct is the loss in percent (0..100) of what was sent.
	LossPct float64
	// Sent is the rate the sender says it actually sent (bit/s); 0 where
	// it does not say.
	Sent float64
}

// BehindShare is the share of the rate asked below which a sender is said
// to have fallen behind: what it offered was set by its CPU (or a queue
// holding its socket), not by the rate asked. A paced sender that keeps
// up sends within a percent of it.
const BehindShare = 0.97

// Search is one search's parameters.
type Search struct {
	// Ceiling is the loss allowed, in percent (0 < Ceiling < 100).
	Ceiling float64
	// Low and High bound the rates tried (bit/s); Low is probed first and
	// must pass, High is the most offered.
	Low, High float64
	// Step is the resolution (bit/s): the search stops when the passing
	// and failing rates are closer than this. Rel is a resolution
	// relative to the failing rate instead (0.02: within 2% of it), for
	// a search whose answer may be anywhere from Low to High: a fixed
	// step of 1% of a 10 Gbit/s High is 100 Mbit/s, which put a ceiling
	// of 190 Mbit/s (small datagrams, or one of 16 streams) at 100.8,
	// and one of 60 at Low. Exactly one of the two is set.
	Step float64
	Rel  float64
	// MaxProbes bounds the probes (0: enough for the resolution).
	MaxProbes int
}

// Step is one probe, kept for the samples.
type Step struct {
	Rate    float64 `json:"rate_bps"`
	LossPct float64 `json:"loss_pct"`
	Pass    bool    `json:"pass"`
	// Sent is the rate the sender says it actually sent, below Rate where
	// it fell behind; 0 where it does not say.
	Sent float64 `json:"sent_bps,omitempty"`
}

// Behind reports whether a sender that says it sent sent (bit/s) fell
// behind the rate asked: sent less than BehindShare of it. A sender that
// does not say (0) did not. pktgen always says: a generator that sent
// nothing fails its probe rather than report 0.
func Behind(sent, asked float64) bool { return sent > 0 && sent < BehindShare*asked }

// Behind reports whether the probe's sender fell behind its rate.
func (s Step) Behind() bool { return Behind(s.Sent, s.Rate) }

// Result is the rate found.
type Result struct {
	// Rate is the highest probed rate whose loss was under the ceiling,
	// or what its probe sent where that fell behind (SenderBound).
	Rate    float64
	LossPct float64
	// AtHigh is true when even High passed: the path was not saturated
	// and the answer is a lower bound.
	AtHigh bool
	// SenderBound is true when the passing probe the rate comes from fell
	// behind (Step.Behind): its sender did not offer more, the path
	// carried what it sent, and the path's own ceiling is not known (it
	// is at least Rate).
	SenderBound bool
	Steps       []Step
}

// ErrNoPassingRate is returned when even Low loses more than the ceiling.
var ErrNoPassingRate = errors.New("even the lowest rate loses more than the ceiling")

// Validate checks the parameters before anything runs.
func (s Search) Validate() error {
	switch {
	case !(s.Ceiling > 0 && s.Ceiling < 100):
		return fmt.Errorf("loss ceiling %g%%: must be above 0%% and below 100%%", s.Ceiling)
	case !(s.Low > 0) || !(s.High > s.Low) || math.IsInf(s.High, 0):
		return fmt.Errorf("rates %g..%g bit/s: need 0 < low < high", s.Low, s.High)
	case s.Rel != 0 && s.Step != 0:
		return fmt.Errorf("step %g bit/s and relative step %g: give one", s.Step, s.Rel)
	case s.Rel != 0 && !(s.Rel > 0 && s.Rel < 1):
		return fmt.Errorf("relative step %g: must be above 0 and below 1", s.Rel)
	case s.Rel == 0 && (!(s.Step > 0) || s.Step > s.High-s.Low):
		return fmt.Errorf("step %g bit/s: must be above 0 and at most high-low", s.Step)
	case s.MaxProbes < 0:
		return fmt.Errorf("max probes %d: must not be negative", s.MaxProbes)
	}
	return nil
}

// Run searches. The invariant: pass is a rate whose loss was under the
// ceiling, fail one whose loss was not (or High+, before High is tried).
func (s Search) Run(ctx context.Context, probe Probe) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	max := s.MaxProbes
	if max == 0 {
		max = s.mostProbes()
	}
	var res Result
	try := func(rate float64) (Step, error) {
		if err := ctx.Err(); err != nil {
			return Step{}, err
		}
		o, err := probe(ctx, rate)
		if err != nil {
			return Step{}, fmt.Errorf("probe at %.0f bit/s: %w", rate, err)
		}
		st := Step{Rate: rate, LossPct: o.LossPct, Sent: o.Sent, Pass: o.LossPct < s.Ceiling}
		res.Steps = append(res.Steps, st)
		return st, nil
	}
	// found ends the search at a passing step: its rate, or what it sent
	// where its sender fell behind.
	found := func(st Step) Result {
		res.Rate, res.LossPct = st.Rate, st.LossPct
		if st.Behind() {
			res.Rate, res.SenderBound = st.Sent, true
		}
		return res
	}
	high, err := try(s.High)
	if err != nil {
		return res, err
	}
	if high.Pass {
		res.AtHigh = true
		return found(high), nil
	}
	st, err := try(s.Low)
	if err != nil {
		return res, err
	}
	if !st.Pass {
		return res, fmt.Errorf("%w: %.1f%% at %.0f bit/s (ceiling %g%%)", ErrNoPassingRate, st.LossPct, s.Low, s.Ceiling)
	}
	pass := st
	fail := failedAt(high, pass.Rate)
	// A passing probe that fell behind does not end the search: a sender
	// stalled for a moment (a preempted vCPU) may keep up at a higher
	// rate; one at its limit sends the same whatever is asked, and found
	// then reports that.
	for len(res.Steps) < max && fail-pass.Rate > s.resolution(fail) {
		st, err := try((pass.Rate + fail) / 2)
		if err != nil {
			return res, err
		}
		if st.Pass {
			pass = st
		} else {
			fail = failedAt(st, pass.Rate)
		}
	}
	return found(pass), nil
}

// resolution is how close the passing and failing rates must come, with
// the failing one at fail.
func (s Search) resolution(fail float64) float64 {
	if s.Rel > 0 {
		return s.Rel * fail
	}
	return s.Step
}

// mostProbes is how many probes the resolution can take, as a study's
// planned time counts them (study.CeilingProbes).
func (s Search) mostProbes() int { return study.CeilingProbes(s.Low, s.High, s.Step, s.Rel) }

// failedAt is the failing bound a failed probe sets: the rate it was
// asked for, or what it sent where it fell behind, since the path lost
// too much of that. A failing probe that sent no more than the passing
// rate contradicts the passing one (the path's loss moved between
// probes); its asked rate then stays the bound, as the bisection needs
// pass < fail.
func failedAt(st Step, pass float64) float64 {
	if st.Behind() && st.Sent > pass {
		return st.Sent
	}
	return st.Rate
}
