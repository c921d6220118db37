package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// TestStoredStudyLeftOutReference: a run's study.yaml lists only the
// datapaths that ran (--set datapaths=[bridge], or the engine skipped
// calico) and keeps every reference. Written before or without any
// mark, one naming calico was refused when read again ("the study has
// no datapath \"calico\""): run --resume refused, compare lost the
// study, report and advise --run skipped it. Read as stored, it loads
// everywhere; the same text as a user's study file is still refused.
func TestStoredStudyLeftOutReference(t *testing.T) {
	dir := writeReplicas(t, map[int][]float64{1: {10e9, 10.1e9, 9.9e9}}, []string{"cnibench", "run", "reach.yaml"})
	text := reachStudy + "  reference:\n    - {datapath: calico, against: bridge, workload: tcp, metric: bitrate, ratio: 1.1}\n"
	file := filepath.Join(dir, results.StudyFile)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if runStudy(dir) == nil {
		t.Error("runStudy (report, advise --run): study lost")
	}
	if _, err := resolveStudy(dir); err != nil {
		t.Errorf("resolveStudy (compare): %v", err)
	}
	var f studyFlags
	if _, err := f.loadFile(file); err != nil {
		t.Errorf("loadFile (run --resume): %v", err)
	}
	if _, err := (&adviseFlags{study: file}).resolver()(nil); err != nil {
		t.Errorf("advise --study RUN/study.yaml (an A/B's rerun): %v", err)
	}
	user := filepath.Join(t.TempDir(), "reach.yaml")
	if err := os.WriteFile(user, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `spec.reference[0].datapath: the study has no datapath "calico"`
	if _, err := f.load(io.Discard, user); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a user's file: %v, want %s", err, want)
	}
	if _, err := (&adviseFlags{study: user}).resolver()(nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("advise --study of a user's file: %v, want %s", err, want)
	}
}
