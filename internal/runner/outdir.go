package runner

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cnibench/cnibench/internal/report"
	"github.com/cnibench/cnibench/internal/results"
)

// CheckOut refuses a new run's directory that exists as a file or holds
// anything: a run never writes over another's results. The command line
// asks it first, before it takes the host's locks (and makes their
// files); Run asks again, under them, for a directory filled meanwhile.
func CheckOut(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return &PreflightError{fmt.Errorf("--out %s exists and is not a directory", dir)}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		if results.Unrecorded(dir) {
			return &PreflightError{fmt.Errorf("--out %s holds the files of a run that ended before it recorded anything (killed before its first "+
				"cluster was built: no %s, empty %s): remove them and run again, or choose another directory", dir, results.EnvFile, results.SamplesFile)}
		}
		if _, err := os.Stat(filepath.Join(dir, results.SamplesFile)); err == nil && !results.HasEnv(dir) {
			// Given-up set-ups recorded before the first cluster was
			// built: --resume refuses a run without its environment.
			return &PreflightError{fmt.Errorf("--out %s holds a run that ended before it recorded its environment (no %s), which --resume "+
				"cannot continue; choose another directory", dir, results.EnvFile)}
		}
		return &PreflightError{fmt.Errorf("--out %s exists and is not empty; choose another directory (or continue it with --resume)", dir)}
	}
	return nil
}

// closeOut closes the run's files and returns its directory with the
// run's error: the report built when it measured something (finish), and
// no directory when a new run ended before it recorded anything, whose
// files it removes so the same command starts it again
// (Writer.DiscardUnrecorded).
func closeOut(w *results.Writer, resume, measured bool, err error) (string, error) {
	if cerr := w.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil && !resume {
		gone, derr := w.DiscardUnrecorded()
		if gone {
			return "", err
		}
		if derr != nil {
			err = errors.Join(err, derr)
		}
	}
	return w.Dir(), finish(w.Dir(), measured || resume, err, report.Build)
}

// ErrNothingMeasured ends a run whose every cell was given up or
// skipped: there is no report to point to, and it has not succeeded.
var ErrNothingMeasured = errors.New("no trial was measured: every cell failed or was skipped (the warnings above say why)")

// finish builds the report of a run that measured something; one that
// measured nothing fails.
func finish(dir string, measured bool, err error, build func(string) error) error {
	if !measured {
		return cmp.Or(err, ErrNothingMeasured)
	}
	if rerr := build(dir); rerr != nil && err == nil {
		err = fmt.Errorf("build report: %w", rerr)
	}
	return err
}
