package stats

import (
	"math/rand/v2"
	"testing"
)

// The rps-rfs quick run of 2026-11-30 (bitrate, Gbit/s; 1 and 4 pairs):
// rps+ at one pair is two values (the flow hash picks the core), 5
// trials, too few for TwoGroups; WideCells finds it (15% against the
// others' 1.1%), and rps at one pair (4%, 3.6 times the others: in
// benchmark run 4 its 20 trials were two groups too), and nothing else.
func TestWideCellsRun(t *testing.T) {
	cells := [][]float64{
		{14.71, 14.66, 14.94, 15.13, 15.08}, // baseline r=1
		{12.61, 12.43, 12.65},               // rfs
		{12.7, 12.6, 12.63},                 // rfs+
		{16.88, 17.92, 16.54, 17.91, 18.12}, // rps
		{12.63, 17.87, 13.66, 16.84, 13.46}, // rps+
		{7.11, 6.95, 7.0, 7.03, 7.0},        // baseline r=4
		{6.89, 6.82, 7.01, 6.96, 6.97},
		{6.96, 6.71, 6.85, 6.86, 6.83},
		{6.49, 6.48, 6.58},
		{6.43, 6.63, 6.61},
	}
	if _, ok := TwoGroups(cells[4]); ok {
		t.Fatal("TwoGroups found rps+'s two values in 5 trials: the case this test is for is gone")
	}
	got := WideCells(cells)
	for i, w := range got {
		if (w != nil) != (i == 3 || i == 4) {
			t.Errorf("cell %d: wide %+v", i, w)
		}
	}
	if w := got[4]; w != nil && (w.Spread < 0.13 || w.Spread > 0.17 || w.Typical > 0.015 || w.Others != 8 || w.DF != 24) {
		t.Errorf("rps+: %+v, want a spread of about 0.15 against at most 0.015 over the 8 cells not wide (24 df)", *w)
	}
}

// wideRuns simulates runs of m cells of n trials, cell i of relative
// spread sd(i) (normal noise, or two values ±half apart with a coin
// toss for the cells two(i) names), and counts the runs where any cell,
// and where cell 0, is found wide.
func wideRuns(runs, m, n int, sd func(int) float64, two func(int) float64, seed uint64) (any, first int) {
	r := rand.New(rand.NewPCG(seed, 7))
	for range runs {
		cells := make([][]float64, m)
		for i := range cells {
			for range n {
				x := 10 * (1 + sd(i)*r.NormFloat64())
				if h := two(i); h > 0 {
					x *= 1 + h*float64(2*r.IntN(2)-1)
				}
				cells[i] = append(cells[i], x)
			}
		}
		w := WideCells(cells)
		for _, c := range w {
			if c != nil {
				any++
				break
			}
		}
		if w[0] != nil {
			first++
		}
	}
	return any, first
}

// Calibration on synthetic cells with known truth (2000 runs per case
// from fixed seeds). Cells of one spread: a run flags any cell in at
// most 1% of runs (the family-wise level, WideAlpha). Cells whose
// spreads differ by up to a factor of two (half of them 2%, half 4%):
// at most 2%. A coin-toss cell (two values 25% apart) among cells of 2%
// noise is found in 9 runs of 10 with 5 trials, 3 of 4 with 3; one of 8%
// noise (4 times the others) in most runs of 5; one of two values 8%
// apart (about 2 of its own sds per value) in a minority: spread, not
// shape, is what the test sees.
func TestWideCellsCalibration(t *testing.T) {
	const runs = 2000
	none := func(int) float64 { return 0 }
	flat := func(int) float64 { return 0.02 }
	for _, tc := range []struct {
		name       string
		m, n       int
		sd, two    func(int) float64
		maxAny     float64 // share of runs with any cell flagged, at most
		minFirst   float64 // share of runs with cell 0 flagged, at least
		maxFirst   float64
		seed       uint64
		wantsFirst bool
	}{
		{name: "one spread, 10 cells of 5", m: 10, n: 5, sd: flat, two: none, maxAny: 0.01, maxFirst: 1, seed: 1},
		{name: "one spread, 20 cells of 3", m: 20, n: 3, sd: flat, two: none, maxAny: 0.01, maxFirst: 1, seed: 2},
		{name: "one spread, 6 cells of 20", m: 6, n: 20, sd: flat, two: none, maxAny: 0.01, maxFirst: 1, seed: 3},
		{name: "one spread, 3 cells of 3", m: 3, n: 3, sd: flat, two: none, maxAny: 0.01, maxFirst: 1, seed: 10},
		{name: "spreads 2% and 4%", m: 10, n: 5, sd: func(i int) float64 { return 0.02 * float64(1+i%2) }, two: none, maxAny: 0.02, maxFirst: 1, seed: 4},
		{name: "coin toss 25% apart, 5 trials", m: 10, n: 5, sd: flat, two: func(i int) float64 { return map[bool]float64{true: 0.125}[i == 0] }, maxAny: 1, minFirst: 0.9, maxFirst: 1, seed: 5},
		{name: "coin toss 25% apart, 3 trials", m: 10, n: 3, sd: flat, two: func(i int) float64 { return map[bool]float64{true: 0.125}[i == 0] }, maxAny: 1, minFirst: 0.7, maxFirst: 1, seed: 6},
		{name: "4x the spread, 5 trials", m: 10, n: 5, sd: func(i int) float64 { return map[bool]float64{true: 0.08, false: 0.02}[i == 0] }, two: none, maxAny: 1, minFirst: 0.6, maxFirst: 1, seed: 7},
		{name: "3 cells of 3, one 8 times the others' spread", m: 3, n: 3, sd: func(i int) float64 { return map[bool]float64{true: 0.16, false: 0.02}[i == 0] }, two: none, maxAny: 1, minFirst: 0.3, maxFirst: 1, seed: 11},
		{name: "coin toss 8% apart, 5 trials", m: 10, n: 5, sd: flat, two: func(i int) float64 { return map[bool]float64{true: 0.04}[i == 0] }, maxAny: 1, minFirst: 0, maxFirst: 0.2, seed: 8},
	} {
		any, first := wideRuns(runs, tc.m, tc.n, tc.sd, tc.two, tc.seed)
		a, f := float64(any)/runs, float64(first)/runs
		t.Logf("%s: any cell flagged in %.3f of runs, cell 0 in %.3f", tc.name, a, f)
		if a > tc.maxAny || f < tc.minFirst || f > tc.maxFirst {
			t.Errorf("%s: any %.3f (want <= %.3f), cell 0 %.3f (want %.2f to %.2f)", tc.name, a, tc.maxAny, f, tc.minFirst, tc.maxFirst)
		}
	}
}

// Two wide cells do not hide each other: each inflates the typical
// spread the other is tested against, so they are found together once
// the first is out of the pool. A cell with a value that has no
// logarithm, or with 2 trials, is neither tested nor pooled.
func TestWideCellsMaskingAndSkips(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	cells := make([][]float64, 12)
	for i := range cells {
		for range 5 {
			cells[i] = append(cells[i], 10*(1+0.02*r.NormFloat64()))
		}
	}
	cells[0] = []float64{10, 13, 10.2, 13.1, 9.9}
	cells[1] = []float64{8, 11, 8.1, 10.8, 11.2}
	cells[2] = []float64{10, 0, 10} // a zero: no logarithm
	cells[3] = []float64{10, 30}    // two trials
	got := WideCells(cells)
	if got[0] == nil || got[1] == nil {
		t.Errorf("two wide cells: %+v, %+v", got[0], got[1])
	}
	if got[0] != nil && got[0].Others != 8 {
		t.Errorf("typical spread over %d cells, want the 8 others that are tested and not wide", got[0].Others)
	}
	for i := 2; i < len(got); i++ {
		if got[i] != nil {
			t.Errorf("cell %d flagged: %+v", i, *got[i])
		}
	}
}
