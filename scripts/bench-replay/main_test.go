package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// writeRun records a fixed run of n rounds: a baseline and a tuning
// whose bitrate is gain times the baseline's, with 1% noise per trial.
func writeRun(t *testing.T, n int, gain float64) string {
	t.Helper()
	return writeRunOf(t, n, "rfs", func(int) float64 { return gain })
}

// writeRunOf records a fixed run of n rounds: a baseline and a tuning
// whose bitrate in round k is gain(k) times the baseline's mean, with 1%
// noise per trial.
func writeRunOf(t *testing.T, n int, tuning string, gain func(k int) float64) string {
	t.Helper()
	dir := t.TempDir() + "/run"
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStudy([]byte("kind: Study\n")); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for k := 1; k <= n; k++ {
		for _, c := range []struct {
			tuning string
			mean   float64
		}{{"baseline", 1e9}, {tuning, gain(k) * 1e9}} {
			s := results.Sample{
				Cell:  results.Cell{Datapath: "calico-vxlan", Tuning: c.tuning, Workload: "tcp", Replicas: 4},
				Trial: k, Start: t0, End: t0.Add(10 * time.Second),
				Metrics: map[string]float64{results.MetricBitrate: c.mean * (1 + 0.01*rng.NormFloat64())},
			}
			t0 = s.End
			if err := w.AppendSample(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReplayStopsAClearGainEarly(t *testing.T) {
	dir := writeRun(t, 20, 1.2)
	var out, errb bytes.Buffer
	if code := run([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"| calico-vxlan tcp r=4 | rfs | better 1.19",
		"n=20 | better 1.18",
		"n=3, target | yes |",
		// 20 trials of each cell against 3: 400 s of trials against 60 s.
		"same decision in 1 of 1 cells (0 more compatible); machine time of the trials: fixed 6m40s, adaptive replay 1m0s (0.15 of fixed)",
		// A 20% gain with 1% noise: any design needs only the minimum.
		"trials: fixed 40, adaptive replay 6 (0.15); the fewest any sequential design could spend on the fixed design's decisions " +
			"(Wald's SPRT told each cell's true difference, 2.5% wrong per side, bound.go): 6 (0.15) to reach each in 80% of runs, 6 (0.15) in 95%",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// A cell whose trials take two values, 0.8 or 1.2 times the baseline's
// (RPS placing one flow on one CPU or another, per trial), its first
// three on the slow side: replayed alone it is called worse at the first
// look, after 3 trials, as run 5 of docs/statistics.md's benchmark called
// rps at 1 pair. With -holds naming an adaptive run whose stops.json
// says the runner held it to 8, the replay holds it too: no decision
// before 8 trials. A held cell of a replica count the fixed run lacks
// is warned of.
func TestReplayHolds(t *testing.T) {
	side := []float64{0.8, 0.8, 0.8, 1.2, 1.2, 0.8, 1.2, 1.2, 0.8, 1.2}
	dir := writeRunOf(t, 20, "rps", func(k int) float64 { return side[(k-1)%len(side)] })
	ada := t.TempDir()
	stops := `[
  {"cell": {"datapath": "calico-vxlan", "tuning": "baseline", "workload": "tcp", "replicas": 4}, "metric": "bitrate", "status": "target", "n": 8, "valid": 8, "half_width": null, "of": "normalized", "target": 0, "reason": "its cells stopped"},
  {"cell": {"datapath": "calico-vxlan", "tuning": "rps", "workload": "tcp", "replicas": 4}, "metric": "bitrate", "status": "futile", "n": 8, "valid": 8, "half_width": 0.2, "of": "normalized", "target": 0,
   "reason": "held to 8 trials before a decision: its steering places 4 flows on 4 CPUs per trial by hash, so its trials may take a few distinct values", "held": 8},
  {"cell": {"datapath": "calico-vxlan", "tuning": "rps", "workload": "tcp", "replicas": 1}, "metric": "bitrate", "status": "futile", "n": 8, "valid": 8, "half_width": 0.2, "of": "normalized", "target": 0, "reason": "held", "held": 8}
]
`
	if err := os.WriteFile(filepath.Join(ada, results.StopsFile), []byte(stops), 0o644); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| calico-vxlan tcp r=4 \| rps \| [^|]* \| (\w+) [^|]*n=(\d+), ([^|]*) \| \w+ \|$`)
	for _, tc := range []struct {
		args []string
		held bool
	}{{nil, false}, {[]string{"-holds", ada}, true}} {
		var out, errb bytes.Buffer
		if code := run(append(tc.args, dir), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		m := row.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%v: no row of rps:\n%s", tc.args, out.String())
		}
		n, _ := strconv.Atoi(m[2])
		if !tc.held && (m[1] != "worse" || n != 3 || m[3] != "target") {
			t.Errorf("unheld: %s n=%d, %s; want worse at 3 trials (the test's point)", m[1], n, m[3])
		}
		if tc.held && (n < 8 || !strings.HasSuffix(m[3], ", held to 8")) {
			t.Errorf("held: %s n=%d, %s; want no stop before 8 trials, held to 8", m[1], n, m[3])
		}
		warn := "warning: -holds " + ada + ": it held calico-vxlan tcp r=1 rps, of which " + dir + " has no trials (not the same study?)"
		if got := errb.String(); tc.held != strings.Contains(got, warn) {
			t.Errorf("%v: stderr %q; want the warning %v", tc.args, got, tc.held)
		}
	}
}

func TestReplayErrors(t *testing.T) {
	// identical, 0.1% margin: the adaptive design wants more than 5 rounds
	short := writeRun(t, 5, 1.0)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-max", "20", "-margin", "0.001", short}, 1, "calico-vxlan tcp r=4: baseline has no trial 6: the fixed run must have at least -max trials"},
		{[]string{}, 2, "usage: bench-replay"},
		{[]string{"-min", "0", short}, 2, "trials.min 0"},
		{[]string{t.TempDir() + "/none"}, 2, "none"},
		{[]string{"-holds", t.TempDir(), short}, 2, "-holds: open "},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

// A small real loss is "equal, significant" to one design and "worse" to
// the other: compatible, not the same and not a contradiction.
func TestAgree(t *testing.T) {
	cmp := func(v stats.Verdict, sig bool, ratio float64) stats.Comparison {
		c := stats.Comparison{Decision: stats.Decision{Verdict: v, Significant: sig}}
		c.Chosen.Ratio = ratio
		return c
	}
	eqLow, eqLowNS := cmp(stats.Equal, true, 0.97), cmp(stats.Equal, false, 0.99)
	worse, better, undecided := cmp(stats.Worse, true, 0.95), cmp(stats.Better, true, 1.05), cmp(stats.Undecided, false, 0.98)
	for _, tc := range []struct {
		fixed, ada stats.Comparison
		dir        stats.Direction
		want       string
	}{
		{worse, worse, stats.HigherIsBetter, same},
		{eqLow, worse, stats.HigherIsBetter, compatible},
		{worse, eqLow, stats.HigherIsBetter, compatible},
		{eqLow, better, stats.HigherIsBetter, differ},
		{eqLow, better, stats.LowerIsBetter, compatible}, // lower latency is better
		{eqLowNS, worse, stats.HigherIsBetter, differ},
		{worse, undecided, stats.HigherIsBetter, differ},
	} {
		if got := agree(tc.fixed, &tc.ada, tc.dir); got != tc.want {
			t.Errorf("fixed %+v, adaptive %+v (direction %d): %q, want %q", tc.fixed.Decision, tc.ada.Decision, tc.dir, got, tc.want)
		}
	}
	if got := agree(worse, nil, stats.HigherIsBetter); got != differ {
		t.Errorf("no adaptive look: %q", got)
	}
}

// waldN against the formula worked by hand: δ = s gives δ²/(2s²) = 1/2,
// and with α 2.5%, β 20% the numerator is 0.8·ln 32 + 0.2·ln(0.2/0.975).
func TestWaldN(t *testing.T) {
	want := 2 * (0.8*math.Log(32) + 0.2*math.Log(0.2/0.975))
	if got := waldN(0.05, 0.05, 0.025, 0.2); math.Abs(got-want) > 1e-9 {
		t.Errorf("waldN = %v, want %v", got, want)
	}
	if got := waldN(0.025, 0.05, 0.025, 0.2); math.Abs(got-4*want) > 1e-9 {
		t.Errorf("half the difference: %v, want four times as many, %v", got, 4*want)
	}
}

// withSpread returns 20 log-ratios with mean d and sample sd s.
func withSpread(d, s float64) []float64 {
	out := make([]float64, 20)
	for i := range out {
		z := math.Sqrt(19.0 / 20)
		if i%2 == 1 {
			z = -z
		}
		out[i] = d + s*z
	}
	return out
}

// TestBoundOfRun4 is the bound for benchmark run 4 of docs/statistics.md
// ("Adaptive against fixed"), from its fixed design's table: each cell's
// decision and 95% interval over 20 trials, whose half-width gives the
// spread of a round's log-ratio (half-width·√20 / t(0.975, 19)). Even
// Wald's test told the true differences needs 0.46 of the fixed run's
// trials to reach its decisions in 80% of runs and 0.53 in 95%; the
// adaptive design took 0.47-0.49.
func TestBoundOfRun4(t *testing.T) {
	run4 := []struct {
		pairs           int
		v               stats.Verdict
		ratio, low, hig float64
	}{
		{1, stats.Worse, 0.855, 0.828, 0.884}, {1, stats.Worse, 0.856, 0.829, 0.884},
		{1, stats.Undecided, 1.060, 0.993, 1.132}, {1, stats.Undecided, 1.054, 0.977, 1.132},
		{4, stats.Worse, 0.962, 0.933, 0.992}, {4, stats.Worse, 0.963, 0.941, 0.986},
		{4, stats.Worse, 0.912, 0.888, 0.936}, {4, stats.Worse, 0.917, 0.884, 0.950},
		{16, stats.Equal, 0.974, 0.956, 0.993}, {16, stats.Worse, 0.952, 0.932, 0.974},
		{16, stats.Equal, 0.964, 0.953, 0.976}, {16, stats.Equal, 0.972, 0.953, 0.992},
	}
	for _, tc := range []struct {
		beta float64
		want float64
	}{{0.2, 0.46}, {0.05, 0.53}} {
		total := 0.0
		for _, pairs := range []int{1, 4, 16} {
			var ns []float64
			for _, c := range run4 {
				if c.pairs != pairs {
					continue
				}
				s := (math.Log(c.hig) - math.Log(c.low)) / 2 * math.Sqrt(20) / 2.093024
				ns = append(ns, cellBound(c.v, withSpread(math.Log(c.ratio), s), 0.05, 3, 20, alpha, tc.beta))
			}
			total += blockBound(ns)
		}
		t.Logf("β %.2f: %.0f of 300 trials (%.2f)", tc.beta, total, total/300)
		if share := total / 300; math.Abs(share-tc.want) > 0.005 {
			t.Errorf("β %.2f: %.0f of 300 trials (%.3f), want %.2f", tc.beta, total, share, tc.want)
		}
	}
}
