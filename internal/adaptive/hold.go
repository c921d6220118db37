package adaptive

import "fmt"

// Holding a cell whose trials may take a few distinct values.
//
// The looks' error bound assumes roughly normal trial-to-trial noise.
// A cell whose trials take one of two values by chance (RPS putting a
// single flow's receive work on one CPU or another, per trial) breaks
// it at the first looks: all of its first n trials fall on one side
// with probability 2^(1−n), and nothing in those trials shows it, so
// their interval is narrow and wrong. In simulation (TestHeldTwoValued:
// 3 to 20 trials, margin 5%, a tuning whose mean is the baseline's but
// whose trials are 0.8 or 1.2 times it by a coin toss) such a cell was
// called better or worse in about 17% of runs when looked at from 3
// trials; no rule for the first look alone can fix that. Held to
// FewValuedTrials before any look, the rate falls within the 5% the
// looks promise. The runner says which cells are at risk (a knob
// describes how it places flows on CPUs); this package only holds them.

// FewValuedTrials is the count a cell at risk of few-valued trials is
// held to: its trials all fall on one of two equally likely values with
// probability 2^(1−8) = 1/128, and TestHeldTwoValued measures the wrong
// calls within 5% (min 5 gave 8-9%, min 6 about 6%).
const FewValuedTrials = 8

// Hold holds a cell to a count of trials before it may stop on anything
// of its own: no look judges it before then (so no decision, and no
// futility), and no precision target stops it. The budget, a give-up
// and its baseline's end still stop it.
type Hold struct {
	// Trials is the count; the hold has no effect at or below
	// Trials.Min, and never holds a cell beyond Trials.Max (its
	// reason then says it is held only to the maximum).
	Trials int
	// Why says what makes the cell's trials few-valued, for its reason:
	// "its steering places 1 flow on 4 CPUs per trial by hash".
	Why string
}

// Minimum is the count before which a cell held by h stops on nothing
// of its own: Trials.Min, or the hold's count where larger (at most
// Max). A fixed design has one count, which no hold changes. The runner
// asks it too, for the trials a budget must pay for.
func (h Hold) Minimum(t Trials) int {
	if t.Fixed() || h.Trials <= t.Min {
		return t.Min
	}
	return min(h.Trials, t.Max)
}

// held is the reason a held cell gives, "" when the hold has no effect.
// A hold Trials.Max cuts says so: the cell is judged at max with the
// risk the hold is there to bound (min 5 gave 7.6-9.3% wrong calls,
// TestHeldTwoValued), and nothing else in the run would tell.
func (c Cell) held(t Trials) string {
	m := c.Hold.Minimum(t)
	if m <= t.Min {
		return ""
	}
	why := c.Hold.Why
	if why == "" {
		why = "its trials may take a few distinct values"
	}
	if m < c.Hold.Trials {
		return fmt.Sprintf("held only to %s (the trials.max) of the %d its trials need before a decision: %s", TrialCount(m), c.Hold.Trials, why)
	}
	return fmt.Sprintf("held to %s before a decision: %s", TrialCount(m), why)
}
