package app

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/results"
)

// --cni-conf-dir is kube install's: a run's agent sessions read the
// directory the installed agent mounts, so run, doctor and advise with
// --engine kube ignored it, exit 0, while the user believed CNI
// detection read it. They refuse it (exit 2) before the cluster is
// asked anything. (A run without --dry-run is refused at the same
// place; without the refusal it would reach this machine's journal
// directory.)
func TestKubeCNIConfDirIsInstallOnly(t *testing.T) {
	kc, asked := countingAPI(t)
	for _, c := range []struct {
		args []string
		what string
	}{
		{[]string{"run", "rps-rfs", "--quick", "--dry-run", "--engine", "kube"}, "run --engine kube"},
		{[]string{"doctor", "--engine", "kube"}, "doctor --engine kube"},
		{[]string{"advise", "--engine", "kube", "--out", t.TempDir()}, "advise --engine kube"},
	} {
		refusedOnce(t, append(c.args, "--kubeconfig", kc, "--cni-conf-dir", "/etc/cni/net.d"), "--cni-conf-dir is not used by "+c.what)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the API server was asked %d times", n)
	}
	// A run recorded before the refusal is resumed without it.
	o := &results.Origin{Command: []string{"cnibench", "run", "s.yaml", "--engine", "kube", "--cni-conf-dir", "/x", "--context", "ci"}}
	if got := strings.Join(resumeCommand("out/r", o), " "); got != "cnibench run --resume out/r --engine kube --context ci" {
		t.Errorf("resume command %s", got)
	}
}
