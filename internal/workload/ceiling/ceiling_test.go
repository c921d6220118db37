package ceiling

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// link models a bottleneck of capacity cap bit/s: what is offered above
// it is lost, plus a little random loss (binomial noise of a short probe
// of n packets), as a shaped link behaves.
func link(cap float64, base float64, n int, rng *rand.Rand) Probe {
	return func(_ context.Context, rate float64) (Outcome, error) {
		p := base
		if rate > cap {
			p += (rate - cap) / rate
		}
		lost := 0
		for i := 0; i < n; i++ {
			if rng.Float64() < p {
				lost++
			}
		}
		return Outcome{LossPct: 100 * float64(lost) / float64(n)}, nil
	}
}

// sender is a sender that cannot send more than most bit/s in front of
// path: it offers the path min(rate, most) and says what it sent.
func sender(most float64, path Probe) Probe {
	return func(ctx context.Context, rate float64) (Outcome, error) {
		sent := min(rate, most)
		o, err := path(ctx, sent)
		o.Sent = sent
		return o, err
	}
}

func TestFindsBottleneckWithinOneStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cap := range []float64{95e6, 400e6, 923e6, 1.7e9} {
		s := Search{Ceiling: 3, Low: 10e6, High: 2e9, Step: 10e6}
		res, err := s.Run(context.Background(), link(cap, 0.001, 20000, rng))
		if err != nil {
			t.Fatal(err)
		}
		// With 3% allowed, the highest passing rate is cap/(1-0.03)
		// minus the noise margin; within one step of it.
		bound := cap / (1 - 0.03)
		if res.Rate > bound+s.Step || res.Rate < bound-2*s.Step {
			t.Errorf("cap %.0f: found %.0f, want within one step of %.0f (steps %d)", cap, res.Rate, bound, len(res.Steps))
		}
		if res.LossPct >= s.Ceiling {
			t.Errorf("cap %.0f: loss at the rate found %.2f%% is not under the ceiling", cap, res.LossPct)
		}
		if want := 2 + int(math.Ceil(math.Log2(199))); len(res.Steps) > want {
			t.Errorf("cap %.0f: %d probes, more than %d", cap, len(res.Steps), want)
		}
	}
}

// TestRelativeStep: a fixed step of 1% of a 10 Gbit/s high is 100
// Mbit/s, and a ceiling well below it came out far too low: 190 Mbit/s
// behind a sender of 400 (small datagrams) was found at 100.8, one of 60
// behind a sender of 200 at low, 1 Mbit/s, neither flagged. A step
// relative to the failing rate (Rel) finds each within a step of it, in
// no more probes than mostProbes allows; the fixed step still errs
// there (the bug it replaces).
func TestRelativeStep(t *testing.T) {
	for _, c := range []struct{ cap, most float64 }{{190e6, 400e6}, {60e6, 200e6}, {5e9, 20e9}, {3e6, 1e9}} {
		rng := rand.New(rand.NewPCG(5, 6))
		s := Search{Ceiling: 3, Low: 1e6, High: 10e9, Rel: 0.01}
		res, err := s.Run(context.Background(), sender(c.most, link(c.cap, 0, 50000, rng)))
		if err != nil {
			t.Fatal(err)
		}
		bound := c.cap / (1 - 0.03)
		if res.Rate > bound || res.Rate < bound*(1-2*s.Rel) || res.AtHigh || res.SenderBound {
			t.Errorf("cap %.0f behind a sender of %.0f: found %.0f, want within 2%% under %.0f (%d probes)", c.cap, c.most, res.Rate, bound, len(res.Steps))
		}
		if len(res.Steps) > s.mostProbes() {
			t.Errorf("cap %.0f: %d probes, more than %d", c.cap, len(res.Steps), s.mostProbes())
		}
		fixed := Search{Ceiling: 3, Low: 1e6, High: 10e9, Step: 100e6}
		if c.cap < 1e9 {
			if r, _ := fixed.Run(context.Background(), sender(c.most, link(c.cap, 0, 50000, rng))); r.Rate > bound*0.75 && c.cap < 100e6 {
				t.Errorf("cap %.0f: a fixed 100M step found %.0f; the test no longer shows what it guards", c.cap, r.Rate)
			}
		}
	}
	if err := (Search{Ceiling: 3, Low: 1, High: 2, Step: 1, Rel: 0.01}).Validate(); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("step and relative step: %v", err)
	}
	if err := (Search{Ceiling: 3, Low: 1, High: 2, Rel: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "below 1") {
		t.Errorf("relative step 1: %v", err)
	}
}

func TestUnsaturatedAndHopeless(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := Search{Ceiling: 3, Low: 1e6, High: 100e6, Step: 1e6}
	res, err := s.Run(context.Background(), link(1e9, 0, 1000, rng))
	if err != nil || !res.AtHigh || res.Rate != s.High || len(res.Steps) != 1 {
		t.Errorf("unsaturated path: %+v %v, want High at once, marked AtHigh", res, err)
	}
	_, err = s.Run(context.Background(), link(1e9, 0.5, 1000, rng))
	if !errors.Is(err, ErrNoPassingRate) {
		t.Errorf("50%% loss everywhere: %v, want ErrNoPassingRate", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Search
		want string
	}{
		{Search{Ceiling: 0, Low: 1, High: 2, Step: 1}, "ceiling"},
		{Search{Ceiling: 100, Low: 1, High: 2, Step: 1}, "ceiling"},
		{Search{Ceiling: math.NaN(), Low: 1, High: 2, Step: 1}, "ceiling"},
		{Search{Ceiling: 3, Low: 0, High: 2, Step: 1}, "low"},
		{Search{Ceiling: 3, Low: 2, High: 2, Step: 1}, "low"},
		{Search{Ceiling: 3, Low: 1, High: 2, Step: 0}, "step"},
		{Search{Ceiling: 3, Low: 1, High: 2, Step: 5}, "step"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error about %s", tc.s, err, tc.want)
		}
	}
}

func TestProbeErrorAndCancel(t *testing.T) {
	s := Search{Ceiling: 3, Low: 1e6, High: 100e6, Step: 1e6}
	boom := errors.New("iperf3 died")
	_, err := s.Run(context.Background(), func(context.Context, float64) (Outcome, error) { return Outcome{}, boom })
	if !errors.Is(err, boom) {
		t.Errorf("probe error lost: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx, link(1, 0, 1, rand.New(rand.NewPCG(5, 6)))); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

// A sender slower than the path: what it sent at the highest rate is the
// answer, marked, not the rate asked; where the path is the slower one,
// the search finds the path's ceiling as before.
func TestSenderBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := Search{Ceiling: 3, Low: 10e6, High: 4e9, Step: 100e6}
	res, err := s.Run(context.Background(), sender(720e6, link(10e9, 0.001, 20000, rng)))
	if err != nil || !res.AtHigh || !res.SenderBound || res.Rate != 720e6 || len(res.Steps) != 1 || !res.Steps[0].Behind() {
		t.Errorf("sender of 720 Mbit/s before a 10 Gbit/s path: %+v %v, want 720 Mbit/s, AtHigh, SenderBound, one step", res, err)
	}
	s = Search{Ceiling: 3, Low: 10e6, High: 2e9, Step: 10e6}
	res, err = s.Run(context.Background(), sender(1.5e9, link(400e6, 0.001, 20000, rng)))
	if bound := 400e6 / (1 - 0.03); err != nil || res.SenderBound || res.AtHigh || res.Rate > bound+s.Step || res.Rate < bound-2*s.Step {
		t.Errorf("sender of 1.5 Gbit/s before a 400 Mbit/s path: %+v %v, want the path's ceiling, not sender-bound", res, err)
	}
	// A sender at its limit of 700 Mbit/s whose loss there is near the
	// ceiling: high fails (its sender, not yet at that limit, sent 900),
	// a probe in the middle passes behind its rate, the search goes on
	// up to 900 (every probe sends the same) and reports what the last
	// passing probe sent.
	n := 0
	s = Search{Ceiling: 3, Low: 10e6, High: 4e9, Step: 10e6}
	res, err = s.Run(context.Background(), func(_ context.Context, rate float64) (Outcome, error) {
		n++
		o := Outcome{Sent: min(rate, 700e6)}
		switch {
		case rate == s.High:
			o.LossPct, o.Sent = 5, 900e6
		case rate >= 700e6:
			o.LossPct = 2
		}
		return o, nil
	})
	last := res.Steps[len(res.Steps)-1]
	if err != nil || res.AtHigh || !res.SenderBound || res.Rate != 700e6 || res.LossPct != 2 || !last.Pass || last.Rate < 900e6-s.Step || n != len(res.Steps) {
		t.Errorf("behind in the middle: %+v %v, want 700 Mbit/s after bisecting up to what high sent, SenderBound", res, err)
	}
	// A sender within 3% of its rate keeps up.
	if (Step{Rate: 100, Sent: 97.5}).Behind() || !(Step{Rate: 100, Sent: 96}).Behind() || (Step{Rate: 100}).Behind() {
		t.Error("Behind: want false at 97.5% and when the sender does not say, true at 96%")
	}
}

// A failing probe whose sender fell behind failed at what it sent: the
// search bisects below that, not below the rate asked, and so needs
// fewer probes for the same answer.
func TestFailedBehindBoundsAtSent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := Search{Ceiling: 3, Low: 10e6, High: 4e9, Step: 10e6}
	res, err := s.Run(context.Background(), sender(700e6, link(600e6, 0.001, 20000, rng)))
	if err != nil {
		t.Fatal(err)
	}
	if bound := 600e6 / (1 - 0.03); res.SenderBound || res.Rate > bound+s.Step || res.Rate < bound-2*s.Step {
		t.Errorf("sender of 700 Mbit/s before a 600 Mbit/s path: found %.0f, want the path's ceiling %.0f", res.Rate, bound)
	}
	for _, st := range res.Steps[2:] {
		if st.Rate > 700e6 {
			t.Errorf("probe asked %.0f bit/s after the highest probe failed having sent 700 Mbit/s", st.Rate)
		}
	}
	// Bisecting 10-700 Mbit/s to 10 Mbit/s takes 7 probes after high and
	// low; 10-4000 would take 9.
	if want := 2 + int(math.Ceil(math.Log2(69))); len(res.Steps) > want {
		t.Errorf("%d probes, more than %d", len(res.Steps), want)
	}
	// A failing probe that sent no more than the passing rate keeps its
	// asked rate as the bound.
	if got := failedAt(Step{Rate: 800, Sent: 300}, 400); got != 800 {
		t.Errorf("failedAt sent below pass: %g, want the asked 800", got)
	}
	if got := failedAt(Step{Rate: 800, Sent: 790}, 400); got != 800 {
		t.Errorf("failedAt keeping up: %g, want 800", got)
	}
}
