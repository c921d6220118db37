package runner

import (
	"time"

	"github.com/cnibench/cnibench/internal/results"
)

// cellLog is what the run knows of one cell's trials.
type cellLog struct {
	// values are the judged metric's value per round (NaN: the trial
	// failed every attempt or gave no value), and parts the part of the
	// run that measured it where not the first (results.Sample.Part).
	values map[int]float64
	parts  map[int]int
	// wall is the machine time of each trial this process ran, pause and
	// knobs included: the controller's cost estimate.
	wall []time.Duration
	// failed is the error of a trial that failed every attempt; the cell
	// runs no more rounds.
	failed string
}

// meanWall is the mean machine time of the cell's trials; 0 before any.
func (l *cellLog) meanWall() time.Duration {
	if len(l.wall) == 0 {
		return 0
	}
	var sum time.Duration
	for _, w := range l.wall {
		sum += w
	}
	return sum / time.Duration(len(l.wall))
}

// record keeps a round's value, measured in the run's part part.
func (l *cellLog) record(round int, v float64, part int) {
	l.values[round] = v
	if part != 0 {
		if l.parts == nil {
			l.parts = map[int]int{}
		}
		l.parts[round] = part
	}
}

func (r *run) cellLog(c results.Cell) *cellLog {
	if r.logs == nil {
		r.logs = map[results.Cell]*cellLog{}
	}
	l, ok := r.logs[c]
	if !ok {
		l = &cellLog{values: map[int]float64{}}
		r.logs[c] = l
	}
	return l
}
