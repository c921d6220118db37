package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Acceptance tests on synthetic samples with known truth. They check
// coverage, a property of many runs, so they simulate many: 2000 runs per
// scenario from a fixed seed (the result is deterministic). The Monte
// Carlo standard error of a coverage of 0.95 over 2000 runs is
// √(0.95·0.05/2000) = 0.0049, so a true 95% interval is accepted at
// >= 0.935 (3 standard errors below nominal; a 90% interval would fail).

const (
	simRuns     = 2000
	minCoverage = 0.935
)

// scenario draws the per-round values of baseline A and configuration B:
//
//	A_k = μA · d_k · (1 + σA_k·z),   B_k = μB · d_k · (1 + σB_k·z')
//
// with a round effect d_k shared by both (drift: a random walk of step
// walk plus an independent jump of sd jump per round, in log space) and
// independent normal noise whose sd may differ between A and B and, with
// disturbed > 0, is multiplied by 4 in that share of rounds. The true
// ratio of the expected values given the rounds is μB/μA.
type scenario struct {
	name       string
	rounds     int
	muA, muB   float64
	sdA, sdB   float64
	walk, jump float64
	disturbed  float64
	// twoA, twoB > 0 make that side two-valued, as a cell whose flow
	// hashes to one of two cores per trial (rps+ at one pair): its value
	// is μ·(1 − two) or μ·(1 + two), a coin toss per round, times the
	// round effect and the noise. Its expected value stays μ.
	twoA, twoB     float64
	pairedNarrower bool // under drift: the paired interval must be narrower
}

func (s scenario) draw(r *rand.Rand) (x, base []float64) {
	x, base = make([]float64, s.rounds), make([]float64, s.rounds)
	level := 0.0
	for k := range s.rounds {
		level += s.walk * r.NormFloat64()
		d := math.Exp(level + s.jump*r.NormFloat64())
		ka, kb := 1.0, 1.0
		if r.Float64() < s.disturbed {
			ka, kb = 4, 4
		}
		base[k] = s.muA * d * (1 + ka*s.sdA*r.NormFloat64()) * coin(r, s.twoA)
		x[k] = s.muB * d * (1 + kb*s.sdB*r.NormFloat64()) * coin(r, s.twoB)
	}
	return x, base
}

// coin is 1 − two or 1 + two with probability ½ each (1 for two = 0,
// drawing nothing, so the other scenarios' draws stay as they were).
func coin(r *rand.Rand, two float64) float64 {
	if two == 0 {
		return 1
	}
	if r.IntN(2) == 0 {
		return 1 - two
	}
	return 1 + two
}

var scenarios = []scenario{
	{name: "drift, heteroscedastic cells, 10 rounds", rounds: 10, muA: 9.4e9, muB: 9.4e9 * 1.05, sdA: 0.02, sdB: 0.06, walk: 0.05, jump: 0.08, pairedNarrower: true},
	{name: "drift, 5 rounds", rounds: 5, muA: 100, muB: 97, sdA: 0.03, sdB: 0.03, walk: 0.03, jump: 0.10, pairedNarrower: true},
	{name: "drift, 3 rounds", rounds: 3, muA: 100, muB: 110, sdA: 0.02, sdB: 0.04, walk: 0.0, jump: 0.10, pairedNarrower: true},
	{name: "drift, disturbed rounds, 20 rounds", rounds: 20, muA: 5e9, muB: 5e9 * 0.9, sdA: 0.02, sdB: 0.05, walk: 0.02, jump: 0.05, disturbed: 0.15, pairedNarrower: true},
	{name: "no drift, heteroscedastic cells, 20 rounds", rounds: 20, muA: 100, muB: 120, sdA: 0.02, sdB: 0.08},
	{name: "no drift, equal noise, 4 rounds", rounds: 4, muA: 100, muB: 100, sdA: 0.05, sdB: 0.05},
	{name: "no drift, heteroscedastic cells, 3 rounds", rounds: 3, muA: 100, muB: 100, sdA: 0.02, sdB: 0.08},
	// A tuning alternating 5 and 10 against a steady baseline of the same
	// arithmetic mean: the log-ratio interval, which estimated the ratio
	// of geometric means (0.94 here), covered 1 in 0.877 of runs.
	{name: "two-valued tuning (5 or 10 vs 7.5), 20 rounds", rounds: 20, muA: 7.5, muB: 7.5, sdA: 0.02, sdB: 0.02, twoB: 1.0 / 3},
	{name: "two-valued baseline, drift, 30 rounds", rounds: 30, muA: 7.5, muB: 7.5 * 0.97, sdA: 0.02, sdB: 0.02, walk: 0.02, jump: 0.03, twoA: 1.0 / 3},
}

type simResult struct {
	cover, coverU, coverChosen, coverBoot int
	bootRuns                              int
	narrower                              int     // runs where paired is narrower than unpaired
	logWidthP, logWidthU                  float64 // mean log(High/Low)
}

func simulate(s scenario, seed uint64) simResult {
	r := rand.New(rand.NewPCG(seed, 1))
	truth := s.muB / s.muA
	in := func(c RatioCI) bool { return c.Low <= truth && truth <= c.High }
	var res simResult
	for i := range simRuns {
		x, base := s.draw(r)
		c := Compare(x, base, 0.02, HigherIsBetter)
		if in(c.Paired.RatioCI) {
			res.cover++
		}
		if in(c.Unpaired) {
			res.coverU++
		}
		if in(c.Chosen.RatioCI) {
			res.coverChosen++
		}
		if c.Paired.High-c.Paired.Low < c.Unpaired.High-c.Unpaired.Low {
			res.narrower++
		}
		res.logWidthP += math.Log(c.Paired.High / c.Paired.Low)
		res.logWidthU += math.Log(c.Unpaired.High / math.Max(c.Unpaired.Low, 1e-300))
		if s.rounds >= MinBootstrapPairs {
			res.bootRuns++
			if in(PairedBootstrap(x, base, 2000, uint64(i)).RatioCI) {
				res.coverBoot++
			}
		}
	}
	res.logWidthP /= simRuns
	res.logWidthU /= simRuns
	return res
}

func TestPairedCoverage(t *testing.T) {
	booted := 0 // scenarios with enough rounds for the bootstrap
	for i, s := range scenarios {
		res := simulate(s, uint64(100+i))
		cov := float64(res.cover) / simRuns
		covU := float64(res.coverU) / simRuns
		covC := float64(res.coverChosen) / simRuns
		covB := math.NaN()
		if res.bootRuns > 0 {
			covB = float64(res.coverBoot) / float64(res.bootRuns)
		}
		t.Logf("%s: coverage paired-t %.4f, fieller %.4f, chosen %.4f, bootstrap %.4f; mean log-width paired %.4f, fieller %.4f; paired narrower in %.3f",
			s.name, cov, covU, covC, covB, res.logWidthP, res.logWidthU, float64(res.narrower)/simRuns)
		if cov < minCoverage {
			t.Errorf("%s: paired t coverage %.4f < %.3f", s.name, cov, minCoverage)
		}
		// The bootstrap is an approximation (0.935–0.95 measured here):
		// it is held to a bar 1 point lower, which a 90% interval still
		// fails. The chosen interval is the paired one whenever that is
		// valid (Choose), so it is held to the same bar as the paired;
		// when it was the narrower of the two it covered 0.934 at 4
		// rounds without drift and passed only a lowered bar.
		// Written so that NaN fails: the bootstrap scenarios must have run it.
		if res.bootRuns > 0 {
			booted++
			if !(covB >= minCoverage-0.01) {
				t.Errorf("%s: paired bootstrap coverage %.4f < %.3f", s.name, covB, minCoverage-0.01)
			}
		}
		if covC < minCoverage {
			t.Errorf("%s: chosen interval coverage %.4f < %.3f", s.name, covC, minCoverage)
		}
		if s.pairedNarrower && (res.logWidthP >= res.logWidthU || res.narrower < simRuns*85/100) {
			t.Errorf("%s: paired mean log-width %.4f, unpaired %.4f, paired narrower in %d of %d runs: want narrower on average and in 85%% of runs",
				s.name, res.logWidthP, res.logWidthU, res.narrower, simRuns)
		}
	}
	if booted == 0 {
		t.Errorf("no scenario ran the bootstrap (%d rounds or more): its coverage was never checked", MinBootstrapPairs)
	}
}

// TestChooseKeepsTheErrorRate: the interval a decision rests on is chosen
// by a rule fixed before the data are seen (paired when valid), so the
// decision's error is the interval's. Without drift, where the paired and
// Fieller intervals are alike, taking the narrower of the two after
// seeing them picked whichever happened to miss on the narrow side.
//
// Sequential: looks at 3, 5, 8 and 10 trials at 1 − 0.05/4 (what
// adaptive.Looks and DecisionConfidence give for 3..10 trials), a tuning
// identical to its baseline, stopped at its first decision: a wrong
// better/worse in at most 5% of runs. 10,000 runs, so the Monte Carlo
// standard error at 5% is √(0.05·0.95/10000) = 0.0022 and the bar 5% +
// 2 SE = 0.0544. The narrower-of-two rule measured 0.055 (5% noise
// each) and 0.051 (2% against 8%) here, 0.056–0.060 on other seeds; the
// rule now 0.042 and 0.036.
//
// Fixed: one comparison at 95% of 3 to 5 trials: the chosen interval
// misses the truth in at most 5% of 4,000 runs (SE 0.0034; bar 5% + 3 SE
// = 0.060, as the paired interval is exact for normal noise and sits at
// 5% itself). The narrower-of-two rule missed in 0.057–0.076, the rule
// now in 0.043–0.057.
func TestChooseKeepsTheErrorRate(t *testing.T) {
	noises := [][2]float64{{0.05, 0.05}, {0.02, 0.08}}
	const runs = 10000
	bar := 0.05 + 2*math.Sqrt(0.05*0.95/runs)
	looks, conf := []int{3, 5, 8, 10}, 1-0.05/4
	for i, sd := range noises {
		r := rand.New(rand.NewPCG(77, uint64(i)))
		wrong := 0
		for range runs {
			x, base := identical(r, 10, sd)
			for _, n := range looks {
				v := CompareAt(x[:n], base[:n], 0.02, HigherIsBetter, conf).Decision.Verdict
				if v == Better || v == Worse {
					wrong++
				}
				if v != Undecided {
					break
				}
			}
		}
		rate := float64(wrong) / runs
		t.Logf("sequential, noise %v: wrong better/worse in %.4f of %d runs", sd, rate, runs)
		if rate > bar {
			t.Errorf("sequential, noise %v: wrong better/worse in %.4f of runs, want <= %.4f", sd, rate, bar)
		}
	}
	const fixedRuns = 4000
	bar = 0.05 + 3*math.Sqrt(0.05*0.95/fixedRuns)
	for n := 3; n <= 5; n++ {
		for i, sd := range noises {
			r := rand.New(rand.NewPCG(uint64(n), uint64(i)))
			miss := 0
			for range fixedRuns {
				x, base := identical(r, n, sd)
				if c := Compare(x, base, 0.02, HigherIsBetter).Chosen; !(c.Low <= 1 && 1 <= c.High) {
					miss++
				}
			}
			rate := float64(miss) / fixedRuns
			t.Logf("fixed, %d trials, noise %v: the chosen interval misses 1 in %.4f of runs", n, sd, rate)
			if rate > bar {
				t.Errorf("fixed, %d trials, noise %v: the chosen interval misses 1 in %.4f of runs, want <= %.4f", n, sd, rate, bar)
			}
		}
	}
}

// identical draws n rounds of a tuning and a baseline with the same mean
// 100 and noise sd[1] and sd[0], without drift.
func identical(r *rand.Rand, n int, sd [2]float64) (x, base []float64) {
	x, base = make([]float64, n), make([]float64, n)
	for k := range n {
		base[k] = 100 * (1 + sd[0]*r.NormFloat64())
		x[k] = 100 * (1 + sd[1]*r.NormFloat64())
	}
	return x, base
}
