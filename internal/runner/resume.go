package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/version"
)

// loadPrevious reads the interrupted run in the output directory for
// --resume: it must be a run of this study on this machine, with this
// build and engine; its counted trials are kept (they are not run again,
// and the adaptive controller plans from them), its machine time counts
// against the budget, and its failed and repeated attempts stay recorded.
// It changes nothing.
func (r *run) loadPrevious() error {
	dir := r.opt.OutDir
	old, err := results.Load(dir)
	if err != nil {
		return fmt.Errorf("--resume %s: %w", dir, err)
	}
	if !old.HasEnv {
		return fmt.Errorf("--resume %s: no %s: the run ended before it recorded its environment; start it again in a new directory", dir, results.EnvFile)
	}
	now := envinfo.Collect(nil)
	for _, c := range []struct{ what, was, is string }{
		{"host", old.Env.Hostname, now.Hostname},
		{"kernel", old.Env.Kernel, now.Kernel},
		{"CPU model", old.Env.CPUModel, now.CPUModel},
		{"CPU count", fmt.Sprint(old.Env.CPUs), fmt.Sprint(now.CPUs)},
		{"cnibench version", old.Env.Version, version.Version},
		{"engine", old.Env.Engine, r.engine.Name()},
	} {
		if c.was != c.is {
			return fmt.Errorf("--resume %s: the run was made with %s %q, this one would be %q: its trials would not compare; start a new run", dir, c.what, c.was, c.is)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, results.SamplesFile)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--resume %s: no %s", dir, results.SamplesFile)
	}
	for _, s := range old.Samples {
		k := trialKey{s.Cell, s.Trial}
		if r.done[k] {
			return fmt.Errorf("--resume %s: %s trial %d is counted twice in %s", dir, cellID(s.Cell), s.Trial, results.SamplesFile)
		}
		r.done[k] = true
		l := r.cellLog(s.Cell)
		l.values[s.Trial] = valueOf(s, r.metricOfCell(s.Cell))
		r.prior += s.End.Sub(s.Start) + max(r.study.Spec.Cooldown.Duration, minPause)
	}
	for _, s := range old.Marked {
		r.prior += s.End.Sub(s.Start)
	}
	r.samples = len(old.Samples)
	r.notes = append(r.notes, fmt.Sprintf("resumed: %d counted trials kept from run %s (started %s)",
		len(old.Samples), old.Env.RunID, old.Env.Started.Format("2006-01-02 15:04:05 MST")))
	return nil
}

// metricOfCell is metricOf for a cell's workload variant.
func (r *run) metricOfCell(c results.Cell) string {
	for _, w := range r.study.Variants() {
		if w.Name == c.Workload {
			return r.metricOf(w)
		}
	}
	return results.MetricBitrate
}
