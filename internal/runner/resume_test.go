package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/envinfo"
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
	if err := remote.sameSetting(node); err != nil {
		t.Fatalf("kube run resumed from another machine than its nodes: %v", err)
	}
	if len(remote.notes) != 1 || !strings.Contains(remote.notes[0], "server node was host worker-1, kernel 6.1.0-cluster, 96 CPUs, CNI flannel") {
		t.Errorf("notes %q, want the interrupted run's node on record", remote.notes)
	}
	local := &run{engine: stubEngine{}, plan: &plan{}}
	if err := local.sameSetting(node); err == nil || !strings.Contains(err.Error(), `the run was made with host "worker-1"`) {
		t.Errorf("local run made on another host: %v, want refused", err)
	}
	here := envinfo.Collect(nil)
	same := results.Env{Engine: "stub", Version: version.Version, Hostname: here.Hostname, Kernel: here.Kernel, CPUs: here.CPUs, CPUModel: here.CPUModel}
	if err := local.sameSetting(same); err != nil {
		t.Errorf("local run on this machine: %v", err)
	}
	other := node
	other.Engine = "kube"
	if err := remote.sameSetting(other); err == nil || !strings.Contains(err.Error(), `engine "kube", this one would be "stub": resume it with the engine and flags it was started with (--engine kube)`) {
		t.Errorf("another engine: %v", err)
	}
	other = node
	other.Version = "dev-0123456789ab"
	if err := remote.sameSetting(other); err == nil || !strings.Contains(err.Error(), "cnibench version") {
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
