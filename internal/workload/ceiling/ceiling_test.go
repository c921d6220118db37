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
	return func(_ context.Context, rate float64) (float64, error) {
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
		return 100 * float64(lost) / float64(n), nil
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
	_, err := s.Run(context.Background(), func(context.Context, float64) (float64, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Errorf("probe error lost: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx, link(1, 0, 1, rand.New(rand.NewPCG(5, 6)))); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}
