package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/compare"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
)

// loadRun reads a run directory; a directory that is not one is bad input,
// and when it is advise's output the error names the A/B runs inside it,
// which are.
func loadRun(dir string) (*results.Run, error) {
	if err := checkRunDir(dir); err != nil {
		return nil, err
	}
	r, err := results.Load(dir)
	return r, inputErr(err)
}

// runStudy is the study a run directory ran (its study.yaml, resolved);
// nil for a study the format no longer reads, which the pages report.
func runStudy(dir string) *study.Study {
	s, err := study.Resolve(filepath.Join(dir, results.StudyFile), study.Options{}, studyCatalog())
	if err != nil {
		return nil
	}
	return s
}

// checkRunDir says whether dir holds a run (its study.yaml).
func checkRunDir(dir string) error {
	_, err := os.Stat(filepath.Join(dir, results.StudyFile))
	if err == nil {
		return nil
	}
	if _, aerr := os.Stat(filepath.Join(dir, advise.FileJSON)); aerr != nil {
		return inputErr(fmt.Errorf("%s is not a run directory: %w", dir, err))
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "prove-*", results.StudyFile))
	for i, r := range runs {
		runs[i] = filepath.Dir(r)
	}
	hint := "it is advise's output (" + advise.FileJSON + "), and it holds no A/B run (advise without --prove)"
	if len(runs) > 0 {
		hint = "it is advise's output; its A/B runs are " + strings.Join(runs, ", ")
	}
	return inputErr(fmt.Errorf("%s is not a run directory: %s", dir, hint))
}

// head names the runs of a comparison, and says when they are one run by
// two paths (a symbolic link, a trailing "/."), whose every ratio is 1 by
// construction. That is allowed (a check of the gate on a run with
// itself), but no finding.
func head(dirA, dirB string, a, b *results.Run) compare.Head {
	h := compare.NewHead(dirA, dirB, a, b)
	sa, errA := os.Stat(dirA)
	sb, errB := os.Stat(dirB)
	h.Same = errA == nil && errB == nil && os.SameFile(sa, sb)
	return h
}
