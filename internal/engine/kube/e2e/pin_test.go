package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/topology"
)

const pinStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: kube-pin}
spec:
  datapaths: [bridge]
  workloads:
    - {name: cores, tool: iperf3, protocol: tcp, placement: PLACEMENT, pin: {server: SERVER}}
  replicas: [1]
  trials: 1
  duration: 3s
  warmup: 1s
`

// TestKubePinByName runs a workload pinned by placement name on the
// cluster: the server node's agent reads its CPU topology at preflight,
// the name resolves against it (the notes name the node), and the trial
// runs. Across nodes the name is refused at preflight, exit 2, before any
// run object exists, as is a CPU list naming a CPU the server node's pods
// may not run on. The test cluster's nodes share this machine's
// kernel, so the expected CPUs are this machine's.
func TestKubePinByName(t *testing.T) {
	topo, err := topology.Read("/sys")
	if err != nil || len(topo.CPUs) < 2 {
		t.Skipf("skipped: other-core needs 2 CPUs (topology %+v, %v)", topo, err)
	}
	want, err := topo.Resolve(topology.OtherCore, cpuset.Set{topo.CPUs[0].ID})
	if err != nil {
		t.Skipf("skipped: this machine has no other core: %v", err)
	}
	c := setup(t)
	write := func(placement, server string) string {
		file := filepath.Join(t.TempDir(), "pin.yaml")
		if err := os.WriteFile(file, []byte(strings.NewReplacer("PLACEMENT", placement, "SERVER", server).Replace(pinStudy)), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	dir := filepath.Join(t.TempDir(), "run")
	out, err := c.cnibench(append([]string{"run", write("intra-node", "other-core"), "--out", dir}, kubeArgs()...)...).CombinedOutput()
	t.Logf("%s", tail(out, 2000))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	note := "workload cores: pin.server other-core resolved to CPUs " + want.String() + ", placed against CPU 0, the lowest of node " + serverNode
	if !slices.ContainsFunc(r.Env.Notes, func(n string) bool { return strings.HasPrefix(n, note) }) {
		t.Errorf("env notes %q lack %q", r.Env.Notes, note)
	}
	if len(r.Samples) != 1 || r.Samples[0].Metrics["bitrate"] <= 0 {
		t.Errorf("samples %+v, want one with a bitrate", r.Samples)
	}

	out, err = c.cnibench(append([]string{"run", write("inter-node", "other-core"), "--out", filepath.Join(t.TempDir(), "refused")}, kubeArgs()...)...).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "pin.yaml:7: spec.workloads[0]: workload cores: pin.server other-core: on a cluster a placement name resolves the server node's CPU topology") {
		t.Errorf("across nodes: %v\n%s", err, out)
	}

	// A CPU the server node's pods may not run on (one past the last
	// online CPU) is refused at preflight, exit 2, naming the node.
	beyond := topo.CPUs[len(topo.CPUs)-1].ID + 1
	out, err = c.cnibench(append([]string{"run", write("inter-node", fmt.Sprintf(`"%d"`, beyond)), "--out", filepath.Join(t.TempDir(), "refused")}, kubeArgs()...)...).CombinedOutput()
	if refusal := fmt.Sprintf("pin.yaml:7: spec.workloads[0]: workload cores: pin.server %d: node %s lets workloads run on CPUs", beyond, serverNode); !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), refusal) {
		t.Errorf("CPU %d: %v\n%s\nwant %q", beyond, err, out, refusal)
	}
	noRunObjects(t, c)
	noAgentJournalDirs(t)
}
