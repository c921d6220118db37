// Command bench-replay replays the adaptive controller over the trials of
// a fixed-design run: in round k it gives the controller the fixed run's
// trial k of every cell the controller asks for, until it stops them all.
// Both designs are then judged on the same measurements, so the decisions
// differ only by the design (how many rounds, at which confidence), not by
// the machine's mood between two runs. It prints, per cell, the fixed
// design's decision (the 95% comparison over all its trials, as
// summary.csv's decision column) beside the adaptive one, and the machine
// time of the trials each design ran, and the fewest trials any
// sequential design could spend on the fixed design's decisions
// (bound.go). Used by scripts/bench-adaptive.sh
// (docs/statistics.md, "Adaptive against fixed").
//
// The runner holds a cell whose trials may take a few distinct values
// (RPS placing few flows on many CPUs by hash) to 8 trials before any
// decision (adaptive.Hold, internal/runner/hold.go); the fixed run's
// trials do not say which cells those are. -holds DIR names an adaptive
// run of the same study whose stops.json does ("held": the count each
// cell was held to): the replay holds those cells (same datapath,
// tuning, workload, impairment and replica count) to the same count,
// and their stop column says "held to N". Without it, or with a run
// recorded before stops.json had "held", no cell is held.
//
// Usage: go run ./scripts/bench-replay [-min 3] [-max 20] [-margin 0.05] [-metric bitrate] [-baseline baseline] [-holds ADAPTIVEDIR] RUNDIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
)

// block is the cells that share a baseline: one datapath, workload,
// impairment and replica count.
type block struct {
	key   results.Cell // Tuning empty
	cells map[string]*trials
}

// trials is one cell's recorded trials by round.
type trials struct {
	value map[int]float64       // the metric; NaN for a trial without it
	cost  map[int]time.Duration // end − start of every attempt at the trial
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main with its arguments and outputs: 0 when done, 2 on bad
// arguments or an unreadable run, 1 when the run cannot be replayed.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lo := fs.Int("min", 3, "trials.min of the adaptive design")
	hi := fs.Int("max", 20, "trials.max of the adaptive design (at most the fixed run's trials)")
	margin := fs.Float64("margin", 0.05, "decision margin, 0.05 for 5%")
	metric := fs.String("metric", results.MetricBitrate, "the metric decisions are made on")
	base := fs.String("baseline", "baseline", "the baseline tuning")
	holdsDir := fs.String("holds", "", "an adaptive run `dir`ectory of the same study, whose stops.json says which cells the runner held before a decision")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: bench-replay [flags] RUNDIR")
		return 2
	}
	rn, err := results.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg := adaptive.Config{Trials: adaptive.Trials{Min: *lo, Max: *hi}, Margin: *margin, Direction: stats.DirectionOf(*metric)}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	bs := blocks(rn, *metric)
	holds, err := heldIn(*holdsDir, bs, fs.Arg(0), stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var fixed, replayed time.Duration
	fmt.Fprintln(stdout, "| cell | tuning | fixed: decision, ratio [95% CI], n | adaptive replay: decision, ratio [CI at the looks' confidence], n, stop | same |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	count := map[string]int{}
	var fixedN, replayN int
	bound := map[float64]float64{} // by β
	for _, b := range bs {
		if b.cells[*base] == nil {
			continue
		}
		plans, f, r, err := replay(cfg, b, *base, holds)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name(b.key), err)
			return 1
		}
		fixed, replayed = fixed+f, replayed+r
		cellN := map[float64][]float64{}
		for _, p := range plans {
			fixedN += len(b.cells[p.ID].value)
			replayN += p.N
			if p.ID == *base {
				continue
			}
			fd := fixedDecision(cfg, b, p.ID, *base)
			for _, beta := range betas {
				n := cellBound(fd.Decision.Verdict, logRatios(b.cells[p.ID].value, b.cells[*base].value), cfg.Margin, *lo, *hi, alpha, beta)
				cellN[beta] = append(cellN[beta], n)
			}
			a := agree(fd, p.Sequential, cfg.Direction)
			count[a]++
			fmt.Fprintf(stdout, "| %s | %s | %s | %s, %s | %s |\n", name(b.key), p.ID, describe(&fd, len(b.cells[p.ID].value)),
				describe(p.Sequential, p.N), stop(p), a)
		}
		for beta, ns := range cellN {
			bound[beta] += blockBound(ns)
		}
	}
	fmt.Fprintf(stdout, "\nsame decision in %d of %d cells (%d more compatible); machine time of the trials: fixed %s, adaptive replay %s (%.2f of fixed)\n",
		count[same], count[same]+count[compatible]+count[differ], count[compatible],
		fixed.Round(time.Second), replayed.Round(time.Second), replayed.Seconds()/fixed.Seconds())
	fmt.Fprintf(stdout, "trials: fixed %d, adaptive replay %d (%.2f); the fewest any sequential design could spend on the fixed design's decisions "+
		"(Wald's SPRT told each cell's true difference, %.1f%% wrong per side, bound.go): %.0f (%.2f) to reach each in %.0f%% of runs, %.0f (%.2f) in %.0f%%\n",
		fixedN, replayN, float64(replayN)/float64(fixedN), 100*alpha,
		bound[betas[0]], bound[betas[0]]/float64(fixedN), 100*(1-betas[0]), bound[betas[1]], bound[betas[1]]/float64(fixedN), 100*(1-betas[1]))
	return 0
}

// The error rates of the bound: the fixed design's 95% two-sided
// decisions (2.5% wrong per side), reached in 80% or 95% of runs.
const alpha = 0.025

var betas = []float64{0.2, 0.05}

// replay runs the controller over block b, its cells held as holds says
// (by cell), and returns its last plan and the machine time of the
// trials of both designs.
func replay(cfg adaptive.Config, b block, base string, holds map[results.Cell]adaptive.Hold) (plans []adaptive.CellPlan, fixed, replayed time.Duration, err error) {
	ids := make([]string, 0, len(b.cells))
	for id, t := range b.cells {
		ids = append(ids, id)
		for _, c := range t.cost {
			fixed += c
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] == base || ids[j] != base && ids[i] < ids[j] })
	cells := make([]adaptive.Cell, len(ids))
	for i, id := range ids {
		cells[i].ID = id
		if id != base {
			cells[i].Baseline = base
		}
		c := b.key
		c.Tuning = id
		cells[i].Hold = holds[c]
	}
	for round := 1; ; round++ {
		p, err := adaptive.Next(cfg, cells, 0)
		if err != nil || p.Done() {
			return p.Cells, fixed, replayed, err
		}
		for i, id := range ids {
			if !slices.Contains(p.Round, id) {
				continue
			}
			t := b.cells[id]
			v, ok := t.value[round]
			if !ok {
				return nil, 0, 0, fmt.Errorf("%s has no trial %d: the fixed run must have at least -max trials", id, round)
			}
			cells[i].Obs = append(cells[i].Obs, adaptive.Obs{Round: round, Value: v})
			replayed += t.cost[round]
		}
	}
}

// The agreement of two decisions on one cell.
const (
	same = "yes"
	// compatible: one design says equal within the margin and
	// significant (the interval inside the margin, all on one side of 1),
	// the other better or worse on that same side: both hold of a real
	// difference smaller than the margin, and which one a design reports
	// depends on how narrow its interval got (equal needs it inside the
	// margin, better or worse only off 1).
	compatible = "compatible"
	differ     = "no"
)

func agree(fixed stats.Comparison, ada *stats.Comparison, dir stats.Direction) string {
	if ada == nil {
		return differ
	}
	f, a := fixed.Decision, ada.Decision
	if f.Verdict == a.Verdict {
		return same
	}
	side := func(d stats.Decision, ratio float64) stats.Verdict {
		if d.Verdict != stats.Equal || !d.Significant {
			return d.Verdict
		}
		// the side of 1 a significant equal lies on, as a verdict
		if (ratio > 1) == (dir == stats.HigherIsBetter) {
			return stats.Better
		}
		return stats.Worse
	}
	if side(f, fixed.Chosen.Ratio) == side(a, ada.Chosen.Ratio) {
		return compatible
	}
	return differ
}

// fixedDecision is the fixed design's comparison of a cell with its
// baseline over all rounds, at 95%.
func fixedDecision(cfg adaptive.Config, b block, id, base string) stats.Comparison {
	xs, ys := paired(b.cells[id].value, b.cells[base].value)
	return stats.Compare(xs, ys, cfg.Margin, cfg.Direction)
}

// paired are a cell's values and its baseline's from the rounds both
// ran, in the same order.
func paired(x, base map[int]float64) (xs, ys []float64) {
	for k, v := range x {
		if w, ok := base[k]; ok {
			xs, ys = append(xs, v), append(ys, w)
		}
	}
	return xs, ys
}

// blocks groups the run's trials, counted and marked, by block and cell.
func blocks(run *results.Run, metric string) []block {
	by := map[results.Cell]*block{}
	var order []results.Cell
	add := func(s results.Sample) {
		k := s.Cell
		k.Tuning = ""
		b := by[k]
		if b == nil {
			b = &block{key: k, cells: map[string]*trials{}}
			by[k] = b
			order = append(order, k)
		}
		t := b.cells[s.Cell.Tuning]
		if t == nil {
			t = &trials{value: map[int]float64{}, cost: map[int]time.Duration{}}
			b.cells[s.Cell.Tuning] = t
		}
		t.cost[s.Trial] += s.End.Sub(s.Start)
		if s.Counted() {
			v, ok := s.Metrics[metric]
			if !ok {
				v = math.NaN()
			}
			t.value[s.Trial] = v
		}
	}
	for _, s := range run.Marked {
		add(s)
	}
	for _, s := range run.Samples {
		add(s)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].Replicas < order[j].Replicas })
	out := make([]block, len(order))
	for i, k := range order {
		out[i] = *by[k]
	}
	return out
}

// heldIn reads the holds of the adaptive run in dir (none for ""): the
// cells its stops.json records as held before a decision
// (results.Stop.Held), each with a hold to that count. It warns of a
// held cell that no block of the fixed run (in run) has trials of.
func heldIn(dir string, bs []block, run string, stderr io.Writer) (map[results.Cell]adaptive.Hold, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, results.StopsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-holds: %w", err)
	}
	var stops []results.Stop
	if err := json.Unmarshal(b, &stops); err != nil {
		return nil, fmt.Errorf("-holds: %s: %w", path, err)
	}
	holds := map[results.Cell]adaptive.Hold{}
	for _, st := range stops {
		if st.Held > 0 {
			holds[st.Cell] = adaptive.Hold{Trials: st.Held, Why: "the runner held it so in " + dir}
		}
	}
	for _, c := range unmatched(holds, bs) {
		fmt.Fprintf(stderr, "warning: -holds %s: it held %s %s, of which %s has no trials (not the same study?)\n", dir, name(c), c.Tuning, run)
	}
	return holds, nil
}

// unmatched are the held cells that no block has trials of, in order.
func unmatched(holds map[results.Cell]adaptive.Hold, bs []block) []results.Cell {
	var out []results.Cell
	for c := range holds {
		k := c
		k.Tuning = ""
		if !slices.ContainsFunc(bs, func(b block) bool { return b.key == k && b.cells[c.Tuning] != nil }) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// stop is why the replay stopped a cell, and the count it held the cell
// to, if it did.
func stop(p adaptive.CellPlan) string {
	if p.HeldTo > 0 {
		return fmt.Sprintf("%s, held to %d", p.Status, p.HeldTo)
	}
	return string(p.Status)
}

func describe(c *stats.Comparison, n int) string {
	if c == nil {
		return fmt.Sprintf("no look passed, n=%d", n)
	}
	return fmt.Sprintf("%s %.3f [%.3f, %.3f] n=%d", c.Decision.Verdict, c.Chosen.Ratio, c.Chosen.Low, c.Chosen.High, n)
}

func name(k results.Cell) string {
	s := fmt.Sprintf("%s %s r=%d", k.Datapath, k.Workload, k.Replicas)
	if k.Impairment != "" {
		s += " " + k.Impairment
	}
	return s
}
