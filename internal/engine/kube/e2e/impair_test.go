package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
)

const kubeImpairStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: kube-impair}
spec:
  datapaths: [bridge, flannel-vxlan]
  tunings: [baseline]
  impairAt: {where: underlay}
  impairments: [none, loss-low]
  workloads:
    - {name: udp, tool: iperf3, protocol: udp, length: "1400", rate: 100M}
  replicas: [1]
  trials: 1
  duration: 3s
  warmup: 1s
`

// TestKubeImpairments runs netem through the nodes' agents. The test
// cluster's nodes share this machine's kernel: where it lacks netem (the
// CI machine), preflight asks the agents, and the run stops with exit 2
// and one line naming the node and netem before anything is created;
// where it has netem, the loss-low cell's qdisc drops packets on the
// client node's underlay and the node is as before afterwards. Of the
// study's two datapaths the one standing for the cluster's CNI (bridge)
// is picked first, and the refusal names it alone.
func TestKubeImpairments(t *testing.T) {
	c := setup(t)
	file := filepath.Join(t.TempDir(), "kube-impair.yaml")
	if err := os.WriteFile(file, []byte(kubeImpairStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	out, err := c.cnibench(append([]string{"run", file, "--out", dir}, kubeArgs()...)...).CombinedOutput()
	t.Logf("run:\n%s", tail(out, 3000))
	if ok, why := probe.Has(probe.Netem); !ok {
		t.Logf("this kernel has no netem (%s): the refusal is checked", why)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("run: %v, want exit 2", err)
		}
		msg := strings.TrimSpace(string(out))
		for _, w := range []string{"impairment loss-low at underlay egress of bridge: node ", "netem", "sch_netem"} {
			if !strings.Contains(msg, w) {
				t.Errorf("refusal lacks %q: %s", w, msg)
			}
		}
		if strings.Contains(msg, "flannel-vxlan:") || strings.Contains(msg, "bridge, flannel-vxlan") {
			t.Errorf("refusal names a datapath the run would not measure: %s", msg)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("run directory %s written", dir)
		}
	} else {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		r, err := results.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.Samples {
			if s.Cell.Impairment == "loss-low" && s.Metrics["qdisc_dropped"] <= 0 {
				t.Errorf("loss-low: the netem dropped nothing: %v", s.Metrics)
			}
		}
	}
	noRunObjects(t, c)
	noAgentJournalDirs(t)
}
