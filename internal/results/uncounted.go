package results

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Why a trial's CPU points come before its sample: a trial is counted
// once its samples.jsonl line is on disk (Load; --resume skips it). With
// the sample first, a kill between the two writes left a counted trial
// with no per-second points, or some of them, and nothing could measure
// them again. With the points first, such a kill leaves points of a trial
// that is not counted: the report reads points by their trial's sample
// (analysis.OneCoreTally), so it never sees them, and --resume, which runs
// that trial again under the same number, removes them first
// (dropUncountedCPU), so the new points do not stand beside them.

// trialKey names one trial of one cell.
type trialKey struct {
	cell  Cell
	trial int
}

// AppendTrial stores a counted trial: its CPU points, then its sample,
// the write that counts it.
func (w *Writer) AppendTrial(s Sample, points []CPUPoint) error {
	if err := w.AppendCPU(points); err != nil {
		return err
	}
	return w.AppendSample(s)
}

// dropUncountedCPU rewrites dir's cpu.jsonl without the points of trials
// samples.jsonl does not count, and leaves it as it is when there are
// none. samples.jsonl must have been trimmed (openTrimmed) before.
func dropUncountedCPU(dir string) error {
	samples, err := readJSONL[Sample](&Run{}, filepath.Join(dir, SamplesFile))
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	counted := map[trialKey]bool{}
	for _, s := range samples {
		if s.Counted() {
			counted[trialKey{s.Cell, s.Trial}] = true
		}
	}
	path := filepath.Join(dir, CPUFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	var keep bytes.Buffer
	dropped := 0
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			// A line that does not parse stays: Load judges it.
			if p, err := decodeLine[CPUPoint](line); err == nil && !counted[trialKey{p.Cell, p.Trial}] {
				dropped++
				continue
			}
		}
		keep.Write(line)
	}
	if dropped == 0 {
		return nil
	}
	if err := WriteFileAtomic(path, keep.Bytes()); err != nil {
		return fmt.Errorf("resume: drop %d CPU points of uncounted trials: %w", dropped, err)
	}
	return nil
}
