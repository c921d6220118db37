package adaptive

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/stats"
)

// Trials bounds the number of trials (rounds) per cell.
type Trials struct {
	Min, Max int
}

// Fixed reports whether the count is fixed (Min = Max): one look, at
// the count; a decision there stops nothing.
func (t Trials) Fixed() bool { return t.Min >= t.Max }

// TrialCount writes n trials: "1 trial", "3 trials".
func TrialCount(n int) string {
	if n == 1 {
		return "1 trial"
	}
	return strconv.Itoa(n) + " trials"
}

// Of says what a precision target is about.
type Of string

const (
	// OfMean: the 95% interval of the cell's mean.
	OfMean Of = "mean"
	// OfNormalized: the 95% interval of the ratio to the baseline cell
	// (paired or unpaired, whichever stats.Choose takes). A cell without a
	// baseline falls back to its mean.
	OfNormalized Of = "normalized"
)

// Precision is a target for the interval of one metric.
type Precision struct {
	// Metric names the metric; the controller only sees its values (the
	// runner picks them), the name is for messages.
	Metric string
	// HalfWidth is the relative half-width to reach: 0.02 for ±2%.
	HalfWidth float64
	Of        Of
}

// Config is an adaptive design.
type Config struct {
	Trials Trials
	// Precision is the target; nil means none (cells run to Trials.Max,
	// unless a decision stops them).
	Precision *Precision
	// Margin > 0 also stops a cell with a baseline once its decision
	// against the baseline is reached: better, worse, or equal within
	// ±Margin (stats.Decide). 0 means precision alone decides.
	Margin float64
	// Direction is the metric's good direction, for the decision.
	Direction stats.Direction
	// Budget is the machine time the run may spend; 0 means no budget.
	Budget time.Duration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Trials.Min < 1 {
		errs = append(errs, fmt.Errorf("trials.min %d: want at least 1", c.Trials.Min))
	}
	if c.Trials.Max < c.Trials.Min {
		errs = append(errs, fmt.Errorf("trials.max %d is below trials.min %d", c.Trials.Max, c.Trials.Min))
	}
	if p := c.Precision; p != nil {
		if !(p.HalfWidth > 0) {
			errs = append(errs, fmt.Errorf("precision.halfWidth %g: want a positive share such as 0.02", p.HalfWidth))
		}
		if p.Of != OfMean && p.Of != OfNormalized {
			errs = append(errs, fmt.Errorf("precision.of %q: want %q or %q", p.Of, OfMean, OfNormalized))
		}
	}
	if c.Margin < 0 || math.IsNaN(c.Margin) {
		errs = append(errs, fmt.Errorf("margin %g: want 0 or more", c.Margin))
	}
	if c.Budget < 0 {
		errs = append(errs, fmt.Errorf("budget %s: want 0 (none) or more", c.Budget))
	}
	return errors.Join(errs...)
}

// Paired reports whether a cell with a baseline is judged on its pairs
// with it (a Margin, or a target on the ratio): the baseline then runs
// in every round any of its cells runs, so it runs at least as many
// trials as the one of them that runs most (a held cell's hold too).
func (c Config) Paired() bool {
	return c.Margin > 0 || c.Precision != nil && c.Precision.Of == OfNormalized
}
