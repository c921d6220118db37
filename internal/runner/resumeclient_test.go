package runner

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/progress"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/version"
)

// TestSameNodeClientNode: a kube run killed on client node w2 and
// resumed on w3 (--client-node w3, or the iperf=client label now on
// another node), or on a client node of another host, kernel or CPU
// count, or now sharing the server node's kernel where it had its own,
// is refused once the cluster is up, naming what differs: before, only
// the server node was checked, and the two parts' trials were pooled.
// Facts one side lacks hold the other to nothing, and an env.json
// without client_node (a run before it was recorded) is not refused.
func TestSameNodeClientNode(t *testing.T) {
	w2 := results.ClientNodeEnv{Name: "w2", Hostname: "host-w2", Kernel: "6.1.0-cluster", CPUs: 8}
	was := results.Env{Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96, ClientNode: &w2}
	if err := sameNode(&was, was); err != nil {
		t.Errorf("same nodes: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*results.Env, *results.ClientNodeEnv)
		want   string
	}{
		{"another node", func(_ *results.Env, c *results.ClientNodeEnv) { c.Name = "w3" }, `client node "w2", this cluster's is "w3"`},
		{"another host", func(_ *results.Env, c *results.ClientNodeEnv) { c.Hostname = "host-w3" }, `client node host "host-w2", this cluster's is "host-w3"`},
		{"another kernel", func(_ *results.Env, c *results.ClientNodeEnv) { c.Kernel = "6.8.0" }, `client node kernel "6.1.0-cluster", this cluster's is "6.8.0"`},
		{"another CPU count", func(_ *results.Env, c *results.ClientNodeEnv) { c.CPUs = 4 }, `client node CPU count "8", this cluster's is "4"`},
		{"now on the server's kernel", func(e *results.Env, _ *results.ClientNodeEnv) { e.SharedKernel = true },
			`client node on the server node's kernel "no", this cluster's is "yes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is, c := was, w2
			is.ClientNode = &c
			tc.change(&is, &c)
			err := sameNode(&was, is)
			if !IsResumeRefused(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--client-node") {
				t.Errorf("sameNode = %v; want a resume refusal saying %s and how to resume", err, tc.want)
			}
		})
	}
	// Blank facts (its agent could not say) are unknown.
	is := was
	is.ClientNode = &results.ClientNodeEnv{Name: "w2"}
	if err := sameNode(&was, is); err != nil {
		t.Errorf("client node not described now: %v", err)
	}
	// A run before client_node was recorded: nothing to hold the client
	// node to, its shared_kernel (false when left out) included.
	old := results.Env{Hostname: "worker-1", Kernel: "6.1.0-cluster", CPUs: 96}
	is = was
	is.SharedKernel = true
	if err := sameNode(&old, is); err != nil {
		t.Errorf("interrupted run without client_node: %v", err)
	}
	if w := clientUnchecked(&old, is); !strings.Contains(w, "does not record its client node") || !strings.Contains(w, "client node w2 (host host-w2, kernel 6.1.0-cluster, 8 CPUs)") {
		t.Errorf("warning %q: want it to say the client node w2 could not be checked", w)
	}
	for _, tc := range []struct {
		name    string
		was, is *results.Env
	}{{"recorded", &was, &was}, {"not resumed", nil, &was}, {"no client node now (local)", &old, &old}} {
		if w := clientUnchecked(tc.was, *tc.is); w != "" {
			t.Errorf("%s: warning %q, want none", tc.name, w)
		}
	}
	if n := remoteResumeNote(was); !strings.Contains(n, "client node w2 (host host-w2, kernel 6.1.0-cluster, 8 CPUs, its own kernel)") {
		t.Errorf("resume note %q: want the client node on record", n)
	}
}

// clientEngine describes a cluster's client node as the kube engine does.
type clientEngine struct {
	envEngine
	client results.ClientNodeEnv
}

func (e clientEngine) Describe(_ engine.Run, _ engine.Cluster, env *results.Env) {
	c := e.client
	env.ClientNode = &c
}

// resumedCluster is a kube-like run resuming was, its cluster's client
// node described as client and its nodes sharing a kernel or not.
func resumedCluster(t *testing.T, was results.Env, client results.ClientNodeEnv, shared bool, log io.Writer) *run {
	t.Helper()
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	r := &run{engine: clientEngine{client: client}, plan: &plan{remote: true, sharedKernel: shared}, out: w,
		study: stubStudy(t, "[{tool: iperf3}]"), done: map[trialKey]bool{}, opt: Options{Progress: progress.New(log)}}
	if err := r.loadPrevious(&results.Run{Env: was}); err != nil {
		t.Fatal(err)
	}
	return r
}

// writeEnv holds the resumed run's nodes to sharing a kernel as the
// interrupted run's did: shared_kernel was set after sameNode, which
// then compared the interrupted run's with false.
func TestWriteEnvRefusesClientNowOnServerKernel(t *testing.T) {
	w2 := results.ClientNodeEnv{Name: "w2", Hostname: "host-w2", Kernel: "6.1.0", CPUs: 8}
	was := results.Env{Engine: "stub", Version: version.Version, RunID: "old1", ClientNode: &w2}
	r := resumedCluster(t, was, w2, true, io.Discard)
	if err := r.writeEnv(envCluster{}); !IsResumeRefused(err) || !strings.Contains(err.Error(), `client node on the server node's kernel "no", this cluster's is "yes"`) {
		t.Errorf("writeEnv = %v; want the client node now on the server's kernel refused", err)
	}
	r = resumedCluster(t, was, w2, false, io.Discard)
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatalf("the same client node: %v", err)
	}
	if r.env.ClientNode == nil || *r.env.ClientNode != w2 {
		t.Errorf("env.json's client_node %+v, want %+v", r.env.ClientNode, w2)
	}
}

// TestResumeWarnsClientNodeUnchecked: a kube run whose env.json has no
// client_node (made before it was recorded) resumes, with a warning on
// the progress log and in env.json's notes that its client node could
// not be checked; one that has it resumes without.
func TestResumeWarnsClientNodeUnchecked(t *testing.T) {
	w3 := results.ClientNodeEnv{Name: "w3", Hostname: "host-w3", Kernel: "6.1.0", CPUs: 8}
	var log bytes.Buffer
	r := resumedCluster(t, results.Env{Engine: "stub", Version: version.Version, RunID: "old1"}, w3, false, &log)
	if err := r.writeEnv(envCluster{}); err != nil {
		t.Fatalf("an env.json without client_node: %v", err)
	}
	const want = "could not check that client node w3"
	if !strings.Contains(log.String(), "warning: --resume: the interrupted run's env.json does not record its client node") || !strings.Contains(log.String(), want) {
		t.Errorf("log %q: want the warning", log.String())
	}
	b, err := os.ReadFile(filepath.Join(r.out.Dir(), results.EnvFile))
	if err != nil {
		t.Fatal(err)
	}
	var got results.Env
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, want) }) || got.ClientNode == nil || got.ClientNode.Name != "w3" {
		t.Errorf("env.json notes %q, client node %+v: want the warning and this run's client node", got.Notes, got.ClientNode)
	}
	log.Reset()
	r = resumedCluster(t, results.Env{Engine: "stub", Version: version.Version, RunID: "old1", ClientNode: &w3}, w3, false, &log)
	if err := r.writeEnv(envCluster{}); err != nil || strings.Contains(log.String(), want) {
		t.Errorf("an env.json with client_node: %v, log %q; want no warning", err, log.String())
	}
}
