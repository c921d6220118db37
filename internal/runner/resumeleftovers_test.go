package runner

import (
	"context"
	"encoding/json"
	"errors"
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
// preflight the interrupted run's ID (env.json's run_id, in a run
// directory from before run_ids), so that the kube engine, refusing
// to go on beside leftover pods, Services and Leases, names that run's
// as the interrupted run's (kube.checkLeftBehind); a new run tells none.
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
	if !IsPreflight(err) || !strings.Contains(err.Error(), `resumes ["old1"]`) {
		t.Errorf("resume: %v; want the engine's preflight told run old1", err)
	}
	_, err = Check(context.Background(), Options{Study: s, Engine: "stub"})
	if !IsPreflight(err) || !strings.Contains(err.Error(), `resumes []`) {
		t.Errorf("dry run: %v; want no run to resume", err)
	}
}

// partEngine's Up reads env.json as it stands when the engine would make
// its first object, then fails as a cluster left behind does: the run
// ends there, as one killed with -9 would (without its teardown).
type partEngine struct {
	stubEngine
	dir  string
	atUp *results.Env
}

func (e partEngine) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	got, err := results.Load(e.dir)
	if err != nil {
		return nil, results.DatapathEnv{}, err
	}
	*e.atUp = got.Env
	return nil, results.DatapathEnv{}, engine.LeftBehind(errors.New("the part's Lease and pods are left on the cluster"))
}

// TestResumedPartRecordedBeforeUp: a resumed part is a new run with its
// own run ID, which the kube engine labels its Lease, pods and Services
// with from its first Up. env.json took that ID only once the cluster
// was up (writeEnv): a part killed in between left objects the next
// resume did not look for (it told the engine's preflight only the ID
// env.json's run_id still named), and went on beside them. The part's
// ID is in env.json's run_ids before Up, and the next resume tells the
// engine every part's.
func TestResumedPartRecordedBeforeUp(t *testing.T) {
	var needs engine.Needs
	var atUp results.Env
	dir := t.TempDir()
	saved := engines
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"stub", func(Options) engine.Engine {
		return partEngine{stubEngine: stubEngine{needs: &needs}, dir: dir, atUp: &atUp}
	}})
	t.Cleanup(func() { engines = saved })
	t.Setenv("TMPDIR", t.TempDir())
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	b, _ := json.Marshal(results.Env{Tool: "cnibench", Engine: "stub", Version: version.Version, RunID: "old1"})
	for name, data := range map[string][]byte{results.StudyFile: []byte("spec: {duration: 30s}\n"), results.EnvFile: b, results.SamplesFile: nil, results.CPUFile: nil} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resume := func() error {
		_, err := Run(context.Background(), Options{Study: s, OutDir: dir, JournalDir: t.TempDir(), Resume: true, Engine: "stub",
			MachineLocked: true, Progress: progress.New(io.Discard)})
		return err
	}
	if err := resume(); !errors.Is(err, engine.ErrLeftBehind) {
		t.Fatalf("first resume: %v; want it ended at Up, its cluster left behind", err)
	}
	if len(atUp.RunIDs) != 2 || atUp.RunIDs[0] != "old1" || atUp.RunIDs[1] == "old1" || atUp.RunID != "old1" {
		t.Fatalf("env.json at the resumed part's Up: run_id %q, run_ids %q; want old1's, with the part's own ID after old1 in run_ids",
			atUp.RunID, atUp.RunIDs)
	}
	part := atUp.RunIDs[1]
	if got, err := results.Load(dir); err != nil || !slices.Equal(got.Env.RunIDs, atUp.RunIDs) {
		t.Fatalf("env.json after the part ended: %v, run_ids %q; want %q kept", err, got.Env.RunIDs, atUp.RunIDs)
	}
	if err := resume(); !errors.Is(err, engine.ErrLeftBehind) {
		t.Fatalf("second resume: %v; want it ended at Up", err)
	}
	if !slices.Equal(needs.Resumes, []string{"old1", part}) {
		t.Errorf("the next resume told the engine's preflight runs %q; want old1 and the killed part %s", needs.Resumes, part)
	}
	if len(atUp.RunIDs) != 3 || !slices.Equal(atUp.RunIDs[:2], []string{"old1", part}) {
		t.Errorf("env.json at the second part's Up: run_ids %q; want old1, %s and the second part's", atUp.RunIDs, part)
	}
}
