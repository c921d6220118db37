package compare

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// Two kube runs on one server node but different client nodes (the
// other end of every inter-node trial) differ, each fact of the client
// node named: compare said nothing, env.json naming the client node in
// a note only. A fact one run left blank, or a run that recorded no
// client node (the local engine's, a kube run before it was recorded),
// is unknown and no difference.
func TestDifferencesClientNode(t *testing.T) {
	w2 := &results.ClientNodeEnv{Name: "w2", Hostname: "host-w2", Kernel: "6.1.0", CPUs: 8}
	a := results.Env{Engine: "kube", Version: "v1", Hostname: "node-a", Kernel: "6.1.0", CPUs: 64, ClientNode: w2}
	if d := Differences(a, a, nil); len(d) != 0 {
		t.Errorf("one client node: %q, want no difference", d)
	}
	b := a
	b.ClientNode = &results.ClientNodeEnv{Name: "w3", Hostname: "host-w3", Kernel: "6.8.0", CPUs: 4}
	b.SharedKernel = true
	want := "client node w2 / w3; client node host host-w2 / host-w3; client node kernel 6.1.0 / 6.8.0; client node CPUs 8 / 4; " +
		"client node on the server node's kernel no / yes"
	if d := strings.Join(Differences(a, b, nil), "; "); d != want {
		t.Errorf("another client node: %q, want %q", d, want)
	}
	b.ClientNode = &results.ClientNodeEnv{Name: "w2"}
	b.SharedKernel = false
	if d := Differences(a, b, nil); len(d) != 0 {
		t.Errorf("client node not described in B: %q, want no difference", d)
	}
	b.ClientNode = nil
	b.SharedKernel = true
	if d := Differences(a, b, nil); len(d) != 0 {
		t.Errorf("B recorded no client node: %q, want no difference", d)
	}
}
