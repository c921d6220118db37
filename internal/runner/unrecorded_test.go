package runner

import (
	"context"
	"errors"
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
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// upFailsEngine cannot build a cluster: a kube agent not ready yet, as
// the nodes' passing state says.
type upFailsEngine struct{ stubEngine }

func (upFailsEngine) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	return nil, results.DatapathEnv{}, engine.Transient(errors.New("an agent pod, not ready yet, on node w1"))
}

// TestUnrecordedRunLeavesNoDirectory: a new run of one datapath whose
// set-up fails before it records anything (no env.json, no sample)
// leaves no run directory, so the same command, which the error tells
// the user to run again, starts it again. Before, it left study.yaml and
// two empty files: the same --out was refused ("directory already holds
// a run"), --resume too ("no env.json"), and the command line said
// "(partial results in DIR)" of a directory with none. A directory the
// user made for --out stays, emptied.
func TestUnrecordedRunLeavesNoDirectory(t *testing.T) {
	saved, savedPause := engines, remoteSetUpPause
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"upfails", func(Options) engine.Engine { return upFailsEngine{} }})
	remoteSetUpPause = 0
	t.Cleanup(func() { engines, remoteSetUpPause = saved, savedPause })
	src := "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: s}\nspec:\n  datapaths: [bridge]\n" +
		"  tunings: [baseline]\n  workloads: [{name: tcp, tool: iperf3}]\n  replicas: [1]\n  trials: 1\n  duration: 3s\n"
	s, err := study.Parse("s.yaml", []byte(src), study.Options{}, study.Catalog{Datapaths: []string{"bridge"}, Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	made := t.TempDir()
	for _, tc := range []struct {
		name, out string
		kept      bool // the directory was the user's
	}{{"made by the run", filepath.Join(t.TempDir(), "run"), false}, {"the user's empty directory", made, true}} {
		for attempt := 1; attempt <= 2; attempt++ {
			dir, err := Run(context.Background(), Options{Study: s, OutDir: tc.out, Engine: "upfails", MachineLocked: true,
				JournalDir: t.TempDir(), Progress: progress.New(io.Discard)})
			if !errors.Is(err, engine.ErrTransient) || errors.Is(err, results.ErrRunExists) || dir != "" {
				t.Fatalf("%s, run %d: %q, %v; want no directory and the set-up's error", tc.name, attempt, dir, err)
			}
			ents, serr := os.ReadDir(tc.out)
			switch {
			case tc.kept && (serr != nil || len(ents) > 0):
				t.Errorf("%s, run %d: %v, %d entries; want the directory kept, empty", tc.name, attempt, serr, len(ents))
			case !tc.kept && !errors.Is(serr, os.ErrNotExist):
				t.Errorf("%s, run %d: %v; want the directory gone", tc.name, attempt, serr)
			}
		}
	}
	// Anything recorded keeps the directory: a run that recorded its
	// environment is resumed from it.
	out := filepath.Join(t.TempDir(), "recorded")
	w, err := results.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteEnv(results.Env{RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if gone, err := w.DiscardUnrecorded(); gone || err != nil {
		t.Errorf("a run with env.json: discarded %v, %v; want kept", gone, err)
	}
	if ents, _ := os.ReadDir(out); !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "env") }) {
		t.Errorf("a run with env.json lost it: %v", ents)
	}
}
