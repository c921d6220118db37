package report

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/analysis"
	"github.com/cnibench/cnibench/internal/cmdline"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// UnfinishedLine says that a run ended before finishing some of its
// cells (analysis.Unfinished), what that means for its numbers and
// decisions, and how to continue it; "" for a finished run. dir is the
// run directory, "" for a page inside it.
func UnfinishedLine(unfinished []results.Cell, s *study.Study, dir string) string {
	if len(unfinished) == 0 {
		return ""
	}
	resume := "`cnibench run --resume` on this directory"
	if dir != "" {
		resume = cmdline.Quote([]string{"cnibench", "run", "--resume", dir})
	}
	return fmt.Sprintf("this run did not finish: it ended (interrupted, killed or stopped by an error) before %d of its %d cells "+
		"were done; their numbers are what it measured so far, and their decisions are not final. Continue it where it stopped, "+
		"after cnibench cleanup if it was killed: %s", len(unfinished), len(s.Cells()), resume)
}

// pageWarnings are the page's warnings: an unfinished run first, then
// what loading the run tolerated.
func pageWarnings(run *results.Run, s *study.Study, m analysis.Model) []string {
	if l := UnfinishedLine(m.Unfinished, s, ""); l != "" {
		return append([]string{l}, run.Warnings...)
	}
	return run.Warnings
}

// missingWhy says why a page's cells without samples have none,
// pointing to the "Repetitions and decisions" table only where the page
// has one (stopsShown).
func missingWhy(unfinished []results.Cell, stops []results.Stop) string {
	switch {
	case len(unfinished) > 0 && !stopsShown(stops):
		return "the run ended before it measured them (above)"
	case len(unfinished) > 0:
		return "the \"Repetitions and decisions\" table says why, or the run ended before it measured them (above)"
	case !stopsShown(stops):
		// A finished run without that table (fixed trials keep no
		// stops.json) left a cell without samples where it gave up: a
		// trial, or the set-up of its datapath or pods, failed every
		// attempt (results.SetUpFailed's record says which).
		return "the run gave up on them after failed attempts (at a trial, or at setting up their datapath or pods), which \"Marked trials\" lists with the error"
	}
	return "the \"Repetitions and decisions\" table says why"
}
