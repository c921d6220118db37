package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestNetfilterAndServicePath runs flannel-vxlan with Flannel's and
// kube-proxy's rules (netfilter knob) and one TCP workload per target:
// the pod IP, the ClusterIP across nodes, the ClusterIP within the
// node, and the hairpin. The clients addressed the pod IP and the
// ClusterIP (their command lines say so), every target carried traffic
// (a ClusterIP is reachable only through kube-proxy's DNAT), the Service
// path traverses more chains than the pod path, env.json records the
// rules, and nothing is left.
func TestNetfilterAndServicePath(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	requireTool(t, "iptables-restore")
	// An entry with netfilter: needs bridge netfilter (the intra-node
	// and hairpin Service paths are bridged): refused without it.
	kerneltest.RequireKernel(t, probe.BrNetfilter)
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	study := writeStudy(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: svcpath
spec:
  datapaths:
    - {name: flannel, type: flannel-vxlan, netfilter: {cni: flannel, services: 5}}
  tunings: [baseline]
  workloads:
    - {name: pod, tool: iperf3, counters: true}
    - {name: svc, tool: iperf3, counters: true, target: service}
    - {name: svc-intra, tool: iperf3, counters: true, target: service, placement: intra-node}
    - {name: hairpin, tool: iperf3, counters: true, target: hairpin}
  replicas: [1]
  trials: 1
  duration: 3s
  warmup: 1s
  cooldown: 0s
`)
	var errb syncBuffer
	cmd := startCnibench(t, &errb, &errb, "run", study, "--out", out, "--journal-dir", jdir)
	// The iperf3 clients' command lines say what they addressed: the
	// pods' own IPs, or the ClusterIPs the service-path knob set up.
	addressed := map[string]bool{}
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && alive(cmd.Process.Pid); time.Sleep(50 * time.Millisecond) {
		for _, pid := range iperfChildren(cmd.Process.Pid) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			args := strings.Split(string(b), "\x00")
			for i, a := range args {
				if a == "-c" && i+1 < len(args) {
					addressed[args[i+1]] = true
				}
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if !addressed["10.96.100.0"] {
		t.Errorf("no iperf3 client addressed the ClusterIP 10.96.100.0; addressed %v", addressed)
	}
	if len(addressed) < 2 {
		t.Errorf("addressed %v: want the pod IP too (workload pod)", addressed)
	}
	var m struct {
		Rows []struct {
			Workload string  `json:"workload"`
			Metric   string  `json:"metric"`
			CPU      *int    `json:"cpu"` // null: not one core's row
			Mean     float64 `json:"mean"`
		} `json:"rows"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, row := range m.Rows {
		if row.CPU != nil {
			continue
		}
		if got[row.Workload] == nil {
			got[row.Workload] = map[string]float64{}
		}
		got[row.Workload][row.Metric] = row.Mean
	}
	for _, w := range []string{"pod", "svc", "svc-intra", "hairpin"} {
		if got[w]["bitrate"] <= 0 {
			t.Errorf("%s: bitrate %v, want traffic", w, got[w]["bitrate"])
		}
	}
	// The iptables path is counted from before the clients start, so a
	// connection's first packet through kube-proxy's nat chains
	// (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-*) counts.
	if p, s := got["pod"]["iptables_path_chains_count"], got["svc"]["iptables_path_chains_count"]; s <= p {
		t.Errorf("chains traversed: service %v, pod %v; want the Service path longer", s, p)
	}
	env, _ := os.ReadFile(filepath.Join(out, "env.json"))
	var e struct {
		Datapaths map[string]struct {
			Netfilter *struct {
				CNI      string         `json:"cni"`
				Services int            `json:"services"`
				Rules    map[string]int `json:"rules"`
			} `json:"netfilter"`
		} `json:"datapaths"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	nf := e.Datapaths["flannel"].Netfilter
	if nf == nil || nf.CNI != "flannel" || nf.Services != 5 || nf.Rules["server"] == 0 {
		t.Errorf("env.json netfilter %+v", nf)
	}
	assertUntouched(t, before, "")
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left: %v", ents)
	}
}
