package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/adaptive"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/stats"
	"github.com/cnibench/cnibench/internal/study"
)

// design is the study's repetition design: a fixed number of trials, or
// adaptive repetitions (trials {min, max} with a precision target, a
// decision margin and a budget). Both run through the adaptive
// controller: a fixed design is one whose minimum is its maximum.
type design struct {
	trials    study.Trials
	precision *study.Precision
	margin    float64
	budget    time.Duration
	// versus is what a cell is compared with.
	versus versus
}

// versus is what the controller compares a cell with: the baseline
// tuning at the cell's datapath, or in a study of several datapaths and
// one tuning the first datapath (the question of seeds 001 and 004: is
// this datapath faster than that one).
type versus int

const (
	vsNothing versus = iota
	vsBaseline
	vsFirstDatapath
)

func newDesign(s *study.Study) design {
	d := design{trials: s.Spec.Trials, precision: s.Spec.Precision, budget: s.Spec.Budget.Duration}
	switch s.Compares() {
	case study.ComparesTunings:
		d.versus = vsBaseline
	case study.ComparesDatapaths:
		d.versus = vsFirstDatapath
	}
	// A fixed design compares too: its one look is its count, at 95%, so
	// its stops carry the decisions the report shows and the run's end
	// can list them; only an adaptive design stops a cell on one.
	if d.versus != vsNothing {
		d.margin = s.Spec.DecisionMargin()
	}
	return d
}

// versusOf is the cell c is compared with, and whether there is one (a
// baseline or the first datapath is compared with nothing).
func (r *run) versusOf(c results.Cell) (results.Cell, bool) { return r.study.VersusOf(c) }

// versusName names what c is compared with in stops.json: a tuning or
// a datapath.
func (r *run) versusName(c results.Cell) string {
	b, ok := r.versusOf(c)
	switch {
	case !ok:
		return ""
	case b.Tuning != c.Tuning:
		return b.Tuning
	}
	return b.Datapath
}

// controllerTrials is the design's trial counts as the controller
// takes them.
func (d design) controllerTrials() adaptive.Trials {
	return adaptive.Trials{Min: d.trials.Min, Max: d.trials.Max}
}

// config is the controller's configuration for cells judged on metric,
// with budget the share of the run's budget they may spend.
func (d design) config(metric string, budget time.Duration) adaptive.Config {
	cfg := adaptive.Config{
		Trials:    d.controllerTrials(),
		Margin:    d.margin,
		Direction: stats.DirectionOf(metric),
		Budget:    budget,
	}
	if p := d.precision; p != nil {
		// Without "of", a target is on the ratio to the baseline where
		// tunings are decided against it, else on the mean: a study of
		// datapaths has no normalized values (study validates "of").
		of := adaptive.OfNormalized
		if p.Of == study.OfMean || p.Of == "" && (d.margin == 0 || d.versus != vsBaseline) {
			of = adaptive.OfMean
		}
		cfg.Precision = &adaptive.Precision{Metric: metric, HalfWidth: float64(p.HalfWidth), Of: of}
	}
	return cfg
}

// describe says how the run repeats its cells, printed when it starts:
// an adaptive run's trial count depends on its results, and a user
// waiting for it should know on what.
func (r *run) describe() string {
	d := r.design
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }
	target := ""
	if p := d.precision; p != nil {
		metric := p.Metric
		if metric == "" {
			metric = "its headline metric"
		}
		what := "the 95% interval of the mean of " + metric
		if d.config(p.Metric, 0).Precision.Of == adaptive.OfNormalized {
			what = "the 95% interval of the ratio of " + metric + " to the baseline"
		}
		target = what + " is within ±" + pct(float64(p.HalfWidth))
	}
	vs := "the baseline tuning, " + r.study.Spec.Baseline
	if d.versus == vsFirstDatapath {
		vs = "the first datapath, " + r.study.Spec.Datapaths[0].Name
	}
	var out string
	switch {
	case !d.trials.Adaptive() && d.trials.Max == 1 && (d.margin > 0 || target != ""):
		// Neither a decision nor a precision needs less than two.
		out = "1 trial per cell: no intervals, so nothing is judged or decided (--set trials=3, or a range such as 'trials={min: 3, max: 6}', decides)"
	case !d.trials.Adaptive():
		out = adaptive.TrialCount(d.trials.Max) + " per cell"
		if d.margin > 0 {
			out += fmt.Sprintf("; each cell is judged at 95%% over all its trials against %s (better, worse, or equal within ±%s)", vs, pct(d.margin))
		}
		if target != "" {
			out += "; the report says for each cell whether " + target
		}
	default:
		var until []string
		if target != "" {
			until = append(until, target)
		}
		if d.margin > 0 {
			until = append(until, fmt.Sprintf("it is decided against %s (better, worse, or equal within ±%s)", vs, pct(d.margin)))
		}
		out = fmt.Sprintf("adaptive, %d to %d trials per cell", d.trials.Min, d.trials.Max)
		if len(until) > 0 {
			out += "; a cell stops once " + strings.Join(until, " or ")
		}
	}
	if d.budget > 0 {
		out += fmt.Sprintf("; the run stops when its budget of %s is spent", study.ShortDuration(d.budget))
	}
	return out
}
