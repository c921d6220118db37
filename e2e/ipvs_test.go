package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/probe"
)

const ipvsStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: ipvs-proxies
spec:
  datapaths:
    - {name: kp-ipvs, type: kube-router, netfilter: {cni: kube-router, kubeProxy: ipvs, services: 5}}
    - {name: kr-proxy, type: kube-router, netfilter: {cni: kube-router, kubeProxy: kube-router, services: 5}}
  tunings: [baseline]
  workloads:
    - {name: svc, tool: iperf3, counters: true, target: service}
  replicas: [1]
  trials: 1
  duration: 3s
  warmup: 1s
  cooldown: 0s
`

// The Service path through an IPVS proxy, kube-proxy's IPVS mode and
// kube-router's own: where the kernel lacks ip_vs (this machine) the run
// is refused before anything changes, exit 2, one line naming ipvs and
// the entry; where it has it (the full-kernel VM, scripts/test.sh), TCP
// to the ClusterIP carries traffic through each proxy, and nothing is
// left behind either way.
func TestIPVSServicePath(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	requireTool(t, "iptables-restore")
	// Both entries are kube-router's, which needs br_netfilter whatever
	// the proxy: without it the refusal names the module, not ipvs.
	kerneltest.RequireKernel(t, probe.BrNetfilter)
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	r := cnibenchFor(t, 8*time.Minute, nil, "run", writeStudy(t, ipvsStudy), "--out", out, "--journal-dir", jdir)
	if featureMissing(t, "ipvs") {
		if r.code != 2 {
			t.Fatalf("exit %d, want 2 (no ip_vs here)\n%s", r.code, r.stderr)
		}
		msg := strings.TrimSpace(r.stderr)
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "ipvs") || !strings.Contains(msg, "kp-ipvs") {
			t.Errorf("refusal: %q, want one line naming ipvs and the entry", msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("run directory %s written", out)
		}
	} else {
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, dp := range []string{"kp-ipvs", "kr-proxy"} {
			got := 0.0
			for _, row := range summaryRows(t, out) {
				if row["datapath"] == dp && row["metric"] == "bitrate" && row["cpu"] == nil {
					got, _ = row["mean"].(float64)
				}
			}
			if got <= 0 {
				t.Errorf("%s: no bitrate through the ClusterIP", dp)
			}
		}
	}
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("journal left behind: %v", ents)
	}
	assertUntouched(t, before, "")
}
