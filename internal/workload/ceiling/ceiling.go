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
)

// Probe offers rate (bit/s) for a short time and returns the loss in
// percent (0..100).
type Probe func(ctx context.Context, rate float64) (lossPct float64, err error)

// Search is one search's parameters.
type Search struct {
	// Ceiling is the loss allowed, in percent (0 < Ceiling < 100).
	Ceiling float64
	// Low and High bound the rates tried (bit/s); Low is probed first and
	// must pass, High is the most offered.
	Low, High float64
	// Step is the resolution (bit/s): the search stops when the passing
	// and failing rates are closer than this.
	Step float64
	// MaxProbes bounds the probes (0: enough for the resolution).
	MaxProbes int
}

// Step is one probe, kept for the samples.
type Step struct {
	Rate    float64 `json:"rate_bps"`
	LossPct float64 `json:"loss_pct"`
	Pass    bool    `json:"pass"`
	// Sent is the rate the sender says it actually sent (pktgen's), below
	// Rate where it fell behind its schedule; 0 where it does not say.
	Sent float64 `json:"sent_bps,omitempty"`
}

// Result is the rate found.
type Result struct {
	// Rate is the highest probed rate whose loss was under the ceiling.
	Rate    float64
	LossPct float64
	// AtHigh is true when even High passed: the path was not saturated
	// and the answer is a lower bound.
	AtHigh bool
	Steps  []Step
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
	case !(s.Step > 0) || s.Step > s.High-s.Low:
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
		max = 2 + int(math.Ceil(math.Log2((s.High-s.Low)/s.Step)))
	}
	var res Result
	try := func(rate float64) (bool, float64, error) {
		if err := ctx.Err(); err != nil {
			return false, 0, err
		}
		loss, err := probe(ctx, rate)
		if err != nil {
			return false, 0, fmt.Errorf("probe at %.0f bit/s: %w", rate, err)
		}
		ok := loss < s.Ceiling
		res.Steps = append(res.Steps, Step{Rate: rate, LossPct: loss, Pass: ok})
		return ok, loss, nil
	}
	ok, loss, err := try(s.High)
	if err != nil {
		return res, err
	}
	if ok {
		res.Rate, res.LossPct, res.AtHigh = s.High, loss, true
		return res, nil
	}
	ok, loss, err = try(s.Low)
	if err != nil {
		return res, err
	}
	if !ok {
		return res, fmt.Errorf("%w: %.1f%% at %.0f bit/s (ceiling %g%%)", ErrNoPassingRate, loss, s.Low, s.Ceiling)
	}
	pass, passLoss, fail := s.Low, loss, s.High
	for len(res.Steps) < max && fail-pass > s.Step {
		mid := (pass + fail) / 2
		ok, loss, err := try(mid)
		if err != nil {
			return res, err
		}
		if ok {
			pass, passLoss = mid, loss
		} else {
			fail = mid
		}
	}
	res.Rate, res.LossPct = pass, passLoss
	return res, nil
}
