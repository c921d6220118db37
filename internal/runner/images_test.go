package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
)

// imageCluster is a scaleCluster whose nodes resolved its pods' image
// as ids says (engine.ImageResolver), as a kube cluster's do.
type imageCluster struct {
	scaleCluster
	ids map[string][]string
}

func (c imageCluster) ResolvedImages() map[string][]string { return c.ids }

// A cluster's workload pods exist only once scaled, so what the nodes
// resolved their image to is recorded then, in env.json's image_ids:
// every distinct image, the earlier scales' kept. Nodes that resolved
// one tag to two images are warned of, each node's named. A cluster
// that resolves none (the local engine's) records nothing. Before,
// env.json had the image's reference alone.
func TestScaleRecordsResolvedImages(t *testing.T) {
	const a, b = "reg/cnibench@sha256:aaaa", "reg/cnibench@sha256:bbbb"
	s := datapathsStudy(t, "datapaths=[bridge]")
	dir := t.TempDir()
	var log bytes.Buffer
	r := newRoundsRun(t, s, dir, &log)
	r.env = results.Env{Engine: "kube", Image: "reg/cnibench:v1"}
	var scaled []int
	tgt := &knob.Target{Study: s, Cluster: scaleCluster{&scaled}, Datapath: s.Spec.Datapaths[0], Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true}
	scale := func(c engine.Cluster) results.Env {
		t.Helper()
		if err := r.atReplicas(context.Background(), c, 1, tgt, func() error { return nil }, notLost); err != nil {
			t.Fatal(err)
		}
		var e results.Env
		if raw, err := os.ReadFile(filepath.Join(dir, results.EnvFile)); err == nil {
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	if e := scale(scaleCluster{&scaled}); len(r.env.ImageIDs) != 0 || len(e.ImageIDs) != 0 {
		t.Errorf("no resolver: image IDs %v (env.json %v), want none", r.env.ImageIDs, e.ImageIDs)
	}
	e := scale(imageCluster{scaleCluster{&scaled}, map[string][]string{"w1": {a}, "w2": {a}}})
	if !slices.Equal(e.ImageIDs, []string{a}) || len(e.Notes) != 0 {
		t.Errorf("one image on both nodes: env.json image_ids %v, notes %q; want [%s], none", e.ImageIDs, e.Notes, a)
	}
	e = scale(imageCluster{scaleCluster{&scaled}, map[string][]string{"w1": {a}, "w2": {b}}})
	if !slices.Equal(e.ImageIDs, []string{a, b}) {
		t.Errorf("a tag resolved to two images: env.json image_ids %v, want both", e.ImageIDs)
	}
	warn := "the nodes resolved the workload pods' image reg/cnibench:v1 to different images"
	if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], warn) || !strings.Contains(e.Notes[0], "w1 "+a+"; w2 "+b) ||
		!strings.Contains(log.String(), "warning: "+warn) {
		t.Errorf("notes %q, log %q: want a warning naming each node's image", e.Notes, log.String())
	}
}

// A resumed run's env.json keeps the images the interrupted run's pods
// ran (its kept trials' pods), to which this run's add.
func TestWriteEnvKeepsResolvedImages(t *testing.T) {
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ids := []string{"reg/cnibench@sha256:aaaa"}
	r := &run{engine: envEngine{}, plan: &plan{remote: true}, out: w, study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{},
		opt: Options{Progress: progress.New(&bytes.Buffer{})}, keptEnv: &results.Env{ImageIDs: ids}}
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.env.ImageIDs, ids) {
		t.Errorf("image IDs %v, want the interrupted run's %v", r.env.ImageIDs, ids)
	}
}

// A resumed run whose pods resolved the tag to another image than the
// interrupted run's (re-pushed in between) is warned of, each run's
// images named, though this run's nodes agree; as is a run whose second
// cluster resolved another image than its first. Before, only nodes of
// one cluster disagreeing warned, and env.json's image_ids held two
// images with no word of it.
func TestResumedRunWarnsOfAnotherImage(t *testing.T) {
	const a, b = "reg/cnibench@sha256:aaaa", "reg/cnibench@sha256:bbbb"
	s := datapathsStudy(t, "datapaths=[bridge]")
	for _, tc := range []struct {
		name     string
		kept     []string
		clusters []string
		want     string
	}{
		{"resumed", []string{a}, []string{b}, "the interrupted run's pods ran " + a + "; this run's pods ran " + b},
		{"two clusters", nil, []string{a, b}, "this run's pods ran " + a + ", " + b},
		{"resumed, same image", []string{a}, []string{a}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var log bytes.Buffer
			r := newRoundsRun(t, s, dir, &log)
			r.env = results.Env{Engine: "kube", Image: "reg/cnibench:v1", ImageIDs: slices.Clone(tc.kept)}
			if tc.kept != nil {
				r.keptEnv = &results.Env{ImageIDs: slices.Clone(tc.kept)}
			}
			var scaled []int
			for _, id := range tc.clusters {
				c := imageCluster{scaleCluster{&scaled}, map[string][]string{"w1": {id}, "w2": {id}}}
				tgt := &knob.Target{Study: s, Cluster: c, Datapath: s.Spec.Datapaths[0], Env: &results.DatapathEnv{}, State: map[string]any{}, Local: true}
				if err := r.atReplicas(context.Background(), c, 1, tgt, func() error { return nil }, notLost); err != nil {
					t.Fatal(err)
				}
			}
			var e results.Env
			raw, err := os.ReadFile(filepath.Join(dir, results.EnvFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(e.Notes) != 0 || strings.Contains(log.String(), "warning") {
					t.Errorf("one image throughout: notes %q, log %q; want no warning", e.Notes, log.String())
				}
				return
			}
			if !slices.Equal(e.ImageIDs, []string{a, b}) {
				t.Errorf("env.json image_ids %v, want both", e.ImageIDs)
			}
			warn := "the workload pods' image reg/cnibench:v1 resolved to different images over the run"
			if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], warn) || !strings.Contains(e.Notes[0], tc.want) ||
				!strings.Contains(log.String(), "warning: "+warn) {
				t.Errorf("notes %q, log %q: want a warning naming %q", e.Notes, log.String(), tc.want)
			}
		})
	}
}
