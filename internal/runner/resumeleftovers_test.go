package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/version"
)

// resumesEngine refuses at preflight, saying which run it was told the
// resume continues (engine.Needs.Resumes).
type resumesEngine struct{ stubEngine }

func (resumesEngine) Preflight(_ context.Context, _ *study.Study, n engine.Needs) (engine.Facts, error) {
	return engine.Facts{}, fmt.Errorf("resumes %q", n.Resumes)
}

// TestResumeTellsPreflightTheRun: a --resume tells the engine's
// preflight the interrupted run's ID, so that the kube engine refuses
// to go on beside that run's leftover pods, Services and Lease
// (kube.checkResumedGone); a new run tells none.
func TestResumeTellsPreflightTheRun(t *testing.T) {
	saved := engines
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"stub", func(Options) engine.Engine { return resumesEngine{} }})
	t.Cleanup(func() { engines = saved })
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	dir := t.TempDir()
	b, _ := json.Marshal(results.Env{Engine: "stub", Version: version.Version, RunID: "old1"})
	for name, data := range map[string][]byte{results.StudyFile: []byte("spec: {duration: 30s}\n"), results.EnvFile: b, results.SamplesFile: nil} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Run(context.Background(), Options{Study: s, OutDir: dir, Resume: true, Engine: "stub", MachineLocked: true,
		Progress: progress.New(io.Discard)})
	if !IsPreflight(err) || !strings.Contains(err.Error(), `resumes "old1"`) {
		t.Errorf("resume: %v; want the engine's preflight told run old1", err)
	}
	_, err = Check(context.Background(), Options{Study: s, Engine: "stub"})
	if !IsPreflight(err) || !strings.Contains(err.Error(), `resumes ""`) {
		t.Errorf("dry run: %v; want no run to resume", err)
	}
}
