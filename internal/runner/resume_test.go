package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/version"
)

// TestResumeSameSetting: a run on a cluster records its server node's
// host, kernel and CPUs (the engine's Describe), not this machine's,
// and was refused on every resume for differing from this machine; it
// resumes, with the interrupted run's node put on record. Another
// engine or build is refused on any engine, saying how to resume; the
// local engine still refuses another machine.
func TestResumeSameSetting(t *testing.T) {
	node := results.Env{Engine: "stub", Version: version.Version, Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96,
		CPUModel: "Xeon", CNI: &results.CNI{Name: "flannel", Mode: "vxlan"}}
	remote := &run{engine: stubEngine{}, plan: &plan{remote: true}}
	if err := remote.sameMachine(node); err != nil {
		t.Fatalf("kube run resumed from another machine than its nodes: %v", err)
	}
	if len(remote.notes) != 1 || !strings.Contains(remote.notes[0], "server node was host worker-1, kernel 6.1.0-cluster, 96 CPUs, CNI flannel") {
		t.Errorf("notes %q, want the interrupted run's node on record", remote.notes)
	}
	local := &run{engine: stubEngine{}, plan: &plan{}}
	if err := local.sameMachine(node); err == nil || !strings.Contains(err.Error(), `the run was made with host "worker-1"`) {
		t.Errorf("local run made on another host: %v, want refused", err)
	}
	here := envinfo.Collect(nil)
	same := results.Env{Engine: "stub", Version: version.Version, Hostname: here.Hostname, Kernel: here.Kernel, CPUs: here.CPUs, CPUModel: here.CPUModel}
	if err := local.sameMachine(same); err != nil {
		t.Errorf("local run on this machine: %v", err)
	}
	other := node
	other.Engine = "kube"
	if err := sameBuild(other, "stub"); err == nil || !strings.Contains(err.Error(), `engine "kube", this one would be "stub": resume it with the engine and flags it was started with (--engine kube)`) {
		t.Errorf("another engine: %v", err)
	}
	other = node
	other.Version = "dev-0123456789ab"
	if err := sameBuild(other, "stub"); err == nil || !strings.Contains(err.Error(), "cnibench version") {
		t.Errorf("another build: %v", err)
	}
}

// TestLockRunDir: a run directory is held by one process at a time (a
// second resume with another journal directory is refused, not let
// write the same samples.jsonl), and free again once released.
func TestLockRunDir(t *testing.T) {
	dir := t.TempDir()
	release, err := LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockRunDir(dir); !errors.Is(err, ErrRunDirBusy) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second lock: %v, want ErrRunDirBusy naming %s", err, dir)
	}
	release()
	again, err := LockRunDir(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the lock left %d entries in the run directory", len(entries))
	}
	if _, err := LockRunDir(filepath.Join(dir, "none")); err == nil {
		t.Error("a directory that does not exist locked")
	}
}

// TestResumeRefusesAnEditedStudy: a study.yaml changed after the run
// wrote it (a longer duration by hand) would append trials that do not
// compare with the kept ones; a run recorded before the sum was is not
// refused for it.
func TestResumeRefusesAnEditedStudy(t *testing.T) {
	written := []byte("spec: {duration: 10s}\n")
	old := &results.Run{Study: []byte("spec: {duration: 30s}\n"), Env: results.Env{StudySHA256: studySum(written)}}
	if _, err := sameStudy(old); err == nil || !strings.Contains(err.Error(), "study.yaml was changed after the run wrote it") {
		t.Errorf("edited study: %v, want refused", err)
	}
	old.Study = written
	if sum, err := sameStudy(old); err != nil || sum != old.Env.StudySHA256 {
		t.Errorf("study as written: %q, %v", sum, err)
	}
	old.Env.StudySHA256 = ""
	if _, err := sameStudy(old); err != nil {
		t.Errorf("a run without the sum: %v", err)
	}
}

// TestSameNode: a resumed cluster run whose cluster now has another
// server node or CNI is refused once the cluster is up; the same node,
// a run not resumed, and facts one side lacks pass.
func TestSameNode(t *testing.T) {
	was := results.Env{Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96, CNI: &results.CNI{Name: "flannel", Mode: "vxlan"}}
	if err := sameNode(nil, results.Env{Hostname: "other"}); err != nil {
		t.Errorf("not resumed: %v", err)
	}
	if err := sameNode(&was, was); err != nil {
		t.Errorf("same node: %v", err)
	}
	other := was
	other.Hostname = "worker-2"
	if err := sameNode(&was, other); err == nil || !strings.Contains(err.Error(), `server node host "worker-1", this cluster's is "worker-2"`) {
		t.Errorf("another node: %v", err)
	}
	other = was
	other.CNI = &results.CNI{Name: "calico", Mode: "vxlan"}
	if err := sameNode(&was, other); err == nil || !strings.Contains(err.Error(), "CNI") {
		t.Errorf("another CNI: %v", err)
	}
	other.CNI = nil
	if err := sameNode(&was, other); err != nil {
		t.Errorf("CNI not detected now: %v", err)
	}
}

// TestResumeRefusedBeforePreflight: --resume of a run whose study.yaml
// was edited, or made by another build, is refused before the engine's
// preflight, whose probes load modules (ipip adds tunl0 to the host): it
// was refused only after them, having changed the host.
func TestResumeRefusedBeforePreflight(t *testing.T) {
	var needs engine.Needs
	saved := engines
	engines = append(slices.Clip(engines), struct {
		name string
		new  func(Options) engine.Engine
	}{"stub", func(Options) engine.Engine { return stubEngine{needs: &needs} }})
	t.Cleanup(func() { engines = saved })
	s := stubStudy(t, "[{name: tcp, tool: iperf3}]")
	for _, tc := range []struct {
		name string
		env  results.Env
		want string
	}{
		{"edited study", results.Env{Engine: "stub", Version: version.Version, StudySHA256: studySum([]byte("spec: {duration: 10s}\n"))}, "study.yaml was changed"},
		{"another build", results.Env{Engine: "stub", Version: "dev-0123456789ab"}, "cnibench version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needs = engine.Needs{}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, results.StudyFile), []byte("spec: {duration: 30s}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(tc.env)
			if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, results.SamplesFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), Options{Study: s, OutDir: dir, Resume: true, Engine: "stub", MachineLocked: true,
				Progress: progress.New(io.Discard)})
			if !IsPreflight(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resume = %v; want a preflight refusal saying %q", err, tc.want)
			}
			if needs.Datapaths != nil || needs.Knobs != nil {
				t.Errorf("the engine's preflight ran (given %d datapaths, %d knobs) before the refusal", len(needs.Datapaths), len(needs.Knobs))
			}
		})
	}
}

// TestUnnamedBuild: resuming with a version that does not name one build
// says so; a clean build's resume says nothing.
func TestUnnamedBuild(t *testing.T) {
	if n := unnamedBuild("dev-0123456789ab", "dev-0123456789ab"); n != "" {
		t.Errorf("clean build: %q", n)
	}
	for _, v := range []string{"dev", "dev-0123456789ab-dirty"} {
		if n := unnamedBuild(v, v); !strings.Contains(n, "does not name one build") || !strings.Contains(n, v) {
			t.Errorf("%s: %q", v, n)
		}
	}
}

// TestResumeKeepsSkipNotes: the interrupted run's notes of skipped
// datapaths (env.json alone has them) go on to the resumed run's
// env.json, whose preflight skips nothing (its study.yaml lists only the
// datapaths that ran), so summary.md's "Not run here" list survives a
// resume; a skip this run's preflight noted again is not doubled, and
// the old run's other notes are not carried.
func TestResumeKeepsSkipNotes(t *testing.T) {
	skipA := "datapath calico-wp-ipip skipped: kernel module ipip is not available"
	skipB := "datapaths weave, kube-router skipped: no br_netfilter"
	old := &results.Run{Env: results.Env{Engine: "stub", Version: version.Version,
		Notes: []string{"CPU cost per packet samples perf event cycles", skipA, skipB}}}
	r := &run{engine: stubEngine{}, plan: &plan{remote: true, notes: []string{skipB}},
		study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}}
	if err := r.loadPrevious(old); err != nil {
		t.Fatal(err)
	}
	var skips []string
	for _, n := range r.notes {
		if len(results.SkippedOf([]string{n})) > 0 {
			skips = append(skips, n)
		}
	}
	if !slices.Equal(skips, []string{skipA}) {
		t.Errorf("skip notes carried %q, want %q (B is this run's own)", skips, skipA)
	}
	if slices.ContainsFunc(r.notes, func(n string) bool { return strings.HasPrefix(n, "CPU cost") }) {
		t.Errorf("a non-skip note carried: %q", r.notes)
	}
	if got := results.SkippedOf(append(r.notes, r.plan.notes...)); len(got) != 3 {
		t.Errorf("env.json would list %d skipped datapaths, want 3: %+v", len(got), got)
	}
}
