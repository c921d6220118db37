package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/socklb"
)

const kprStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: cilium-kpr
spec:
  datapaths:
    - {name: cilium-kp, type: cilium, netfilter: {cni: cilium, services: 5}}
    - {name: cilium-kpr, type: cilium, netfilter: {cni: cilium-kpr, kubeProxy: cilium, services: 5}}
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
`

// Cilium beside kube-proxy and with its kube-proxy replacement: every
// target (pod IP, ClusterIP across nodes and within one, hairpin)
// carries traffic on both (a pod's packets to a ClusterIP are translated
// by the datapath's tc programs, or at the socket by the replacement:
// kube-proxy's DNAT could not be reversed past the datapath's
// redirects). With the replacement the Service path
// traverses exactly as many chains as the pod path (measured from the
// counters: the Service costs no rule; with kube-proxy it costs more,
// TestNetfilterAndServicePath), and the programs' counters say which
// one translated the Service; env.json names the socket LB; no
// program stays attached and nothing is left behind. Where the kernel
// cannot attach socket programs the run is refused, exit 2.
func TestCiliumServicePaths(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	requireTool(t, "iptables-restore")
	before := snapshot(t)
	cg, err := cgroup2.Own()
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	progs, _ := socklb.Attached(cg)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	r := cnibenchFor(t, 6*time.Minute, nil, "run", writeStudy(t, kprStudy), "--out", out, "--journal-dir", jdir)
	if featureMissing(t, "socket-lb") {
		if r.code != 2 {
			t.Fatalf("exit %d, want 2 (no socket-lb here)\n%s", r.code, r.stderr)
		}
		return
	}
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := map[string]map[string]float64{}
	for _, row := range summaryRows(t, out) {
		if row["cpu"] != nil {
			continue
		}
		k := row["datapath"].(string) + "/" + row["workload"].(string)
		if got[k] == nil {
			got[k] = map[string]float64{}
		}
		got[k][row["metric"].(string)], _ = row["mean"].(float64)
	}
	for _, dp := range []string{"cilium-kp", "cilium-kpr"} {
		for _, w := range []string{"pod", "svc", "svc-intra", "hairpin"} {
			if got[dp+"/"+w]["bitrate"] <= 0 {
				t.Errorf("%s %s: bitrate %v, want traffic", dp, w, got[dp+"/"+w]["bitrate"])
			}
		}
	}
	const chains = "iptables_path_chains_count"
	if p, s := got["cilium-kpr/pod"][chains], got["cilium-kpr/svc"][chains]; s != p {
		t.Errorf("with the replacement: chains traversed service %v, pod %v; want the same (no Service rules)", s, p)
	}
	// Who translated the Service, from the programs' own counters (the
	// bpf collector): the datapath per packet beside kube-proxy, the
	// socket LB at connect() with the replacement (the datapath then
	// sees the backend's address and translates nothing); no Service,
	// no translation.
	const perPacket, atSocket = "bpf_cilium_lb_count", "bpf_socklb_translated_count"
	for _, c := range []struct {
		cell        string
		pkts, socks bool
	}{
		{"cilium-kp/pod", false, false}, {"cilium-kp/svc", true, false},
		{"cilium-kpr/pod", false, false}, {"cilium-kpr/svc", false, true}, {"cilium-kpr/svc-intra", false, true},
	} {
		m := got[c.cell]
		if p := m[perPacket]; (p > 0) != c.pkts {
			t.Errorf("%s: %s = %v, want translations: %v", c.cell, perPacket, p, c.pkts)
		}
		if s := m[atSocket]; (s > 0) != c.socks {
			t.Errorf("%s: %s = %v, want translations: %v", c.cell, atSocket, s, c.socks)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "env.json"))
	var e struct {
		Datapaths map[string]struct {
			Netfilter *struct {
				KubeProxy string `json:"kube_proxy"`
				SocketLB  string `json:"socket_lb"`
			} `json:"netfilter"`
		} `json:"datapaths"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if nf := e.Datapaths["cilium-kpr"].Netfilter; nf == nil || nf.KubeProxy != "cilium" || nf.SocketLB == "" {
		t.Errorf("env.json cilium-kpr netfilter %+v: want kube_proxy cilium and the socket LB", nf)
	}
	if n, _ := socklb.Attached(cg); n != progs {
		t.Errorf("socket-LB programs on %s: %d after the run, %d before", cg, n, progs)
	}
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("journal left behind: %v", ents)
	}
	assertUntouched(t, before, "")
}
