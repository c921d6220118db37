package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/advise"
	"github.com/cnibench/cnibench/internal/results"
)

// ciRun is a run as a cluster's CI would leave it, copied elsewhere: a
// sockperf ping-pong of 3 trials on bridge, and an env.json recording
// the server node it measured (ci-node-7: 8 CPUs idling in C6, 133 µs
// to leave, under no PM QoS limit, the global one unread on a cluster;
// busy polling and RFS off).
func ciRun(t *testing.T, engine string) string {
	t.Helper()
	var samples []results.Sample
	for trial := 1; trial <= 3; trial++ {
		samples = append(samples, results.Sample{Cell: results.Cell{Datapath: "bridge", Tuning: "baseline", Workload: "rr", Replicas: 1}, Trial: trial,
			Metrics: map[string]float64{"transactions_per_s": 18000 + float64(trial)}})
	}
	dir := writeRunDir(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: ci}
spec:
  datapaths: [bridge]
  workloads: [{name: rr, tool: sockperf, protocol: tcp, messageSize: 64}]
  trials: 3
  duration: 3s
`, samples, nil)
	none, resume := int64(inspectDefaultDMA), map[int]int64{}
	for c := range 8 {
		resume[c] = -1
	}
	env := results.Env{Tool: "cnibench", Engine: engine, Hostname: "ci-node-7", Kernel: "6.8.0-45-generic #45-Ubuntu SMP",
		CPUs: 8, NUMANodes: 1, Started: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),
		CPUIdle: &results.CPUIdle{Driver: "intel_idle", Governor: "menu",
			States: []results.IdleState{{Name: "POLL"}, {Name: "C1", LatencyUS: 2}, {Name: "C6", LatencyUS: 133}},
			Limits: &results.IdleLimits{GlobalUS: &none, ResumeUS: resume}},
		Steering: map[string]string{"net.core.rps_sock_flow_entries": "0"},
		Sysctls:  map[string]string{"net.core.busy_read": "0", "net.core.busy_poll": "0"}}
	if engine == "kube" {
		env.CPUIdle.Limits.GlobalUS = nil // a cluster node's is not the agent's to read
	}
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.EnvFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// /dev/cpu_dma_latency's value with no request.
const inspectDefaultDMA = 2000000000

// advise --run DIR --no-inspect advises from the machine the run
// recorded, not this one: a run copied from a cluster's CI is read on a
// laptop, without root (advise inspected this machine whatever --run
// said, and refused a cluster's run under --engine local). The rules its
// env.json can decide are evaluated on it (cpu-idle, from its cpuidle
// and PM QoS limits, answering the run's idle-wake finding; busy-poll);
// the rest are left out in one line saying why, never listed as not
// applicable on the zeros the record leaves.
func TestAdviseNoInspect(t *testing.T) {
	for _, engine := range []string{"local", "kube"} {
		dir := ciRun(t, engine)
		out := filepath.Join(t.TempDir(), "advice")
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{"advise", "--run", dir, "--no-inspect", "--out", out}, &stdout, &stderr); code != ExitOK {
			t.Fatalf("%s run: exit %d: %s", engine, code, stderr.String())
		}
		md := stdout.String()
		host, _ := os.Hostname()
		for _, want := range []string{
			"the run " + dir + " measured (ci-node-7), as its env.json recorded it when the run began (2026-12-01 09:30 UTC); this machine was not inspected (--no-inspect)",
			"| kernel | 6.8.0-45-generic |",
			"| CPUs | 8 on 1 NUMA node(s) |",
			"| busy polling | busy_read 0 us, busy_poll 0 us |",
			"| rps_sock_flow_entries | 0 |",
			"### busy-poll:",
			"- idle-wake (" + dir + "): ",
			"| numa-placement | not applicable | numa_nodes >= 2: no (numa_nodes = 1) |",
			"Left out, as this machine was not inspected (--no-inspect), and the run's env.json does not record what they read: rfs (reads cores_per_rx_queue >= 2, not rfs_enabled);",
			"nic-gro (reads offload_off: generic-receive-offload)",
			"Advise on that machine itself, without --no-inspect, evaluates them.",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("%s run: advice.md lacks %q:\n%s", engine, want, md)
			}
		}
		// On a cluster's run the global PM QoS limit was not read: the
		// rule is unknown, as on a machine where it cannot be read.
		idle := []string{"### cpu-idle:", "idle_wake_slow: yes (idle_wake_slow = true; reachable: C6 133 µs", "answered by the candidate cpu-idle"}
		if engine == "kube" {
			idle = []string{"| cpu-idle | unknown | idle_wake_slow: cpu_dma_latency unknown: not in the run's env.json (the run could not read it",
				"no candidate here: cpu-idle: unknown: idle_wake_slow: cpu_dma_latency unknown"}
		}
		for _, want := range idle {
			if !strings.Contains(md, want) {
				t.Errorf("%s run: advice.md lacks %q:\n%s", engine, want, md)
			}
		}
		for _, never := range []string{"| rfs |", "| tunnel-mtu |", "| conntrack-size |", "| underlay |", "| netfilter |", "(" + host + ")"} {
			if strings.Contains(md, never) {
				t.Errorf("%s run: advice.md has %q: a fact of this machine, or a rule read on zeros the record leaves:\n%s", engine, never, md)
			}
		}
		if strings.Contains(stderr.String(), "note:") {
			t.Errorf("%s run: stderr %q: no note on root where nothing is inspected", engine, stderr.String())
		}
		var rep struct {
			Inspection struct {
				Record *struct{ Run string } `json:"record"`
			} `json:"inspection"`
			Others []advise.Result `json:"others"`
		}
		b, err := os.ReadFile(filepath.Join(out, advise.FileJSON))
		if err != nil || json.Unmarshal(b, &rep) != nil || rep.Inspection.Record == nil || rep.Inspection.Record.Run != dir {
			t.Fatalf("%s run: advice.json's inspection record: %v %+v", engine, err, rep.Inspection)
		}
		left := 0
		for _, o := range rep.Others {
			if o.Status == advise.LeftOut {
				left++
			}
		}
		if left != 10 {
			t.Errorf("%s run: advice.json has %d rules left out, want 10 (all but cpu-idle, busy-poll and numa-placement): %+v", engine, left, rep.Others)
		}
	}
}

// --no-inspect inspects nothing: --prove (A/Bs built from an inspection,
// run where it was made), --engine and the cluster's flags (what to
// inspect, and how) contradict it, and without --run there is nothing to
// advise from. Each is bad input, one line, exit 2, naming --no-inspect:
// a cluster flag is not answered "needs --engine kube", which would then
// be refused in turn.
func TestAdviseNoInspectRefused(t *testing.T) {
	dir := ciRun(t, "local")
	for args, msg := range map[string]string{
		"advise --run " + dir + " --no-inspect --prove":                   "--prove measures the candidates on this machine (or, with --engine kube, the cluster) from its inspection, and --no-inspect inspects nothing: give one of them",
		"advise --no-inspect --prove":                                     "--prove measures the candidates",
		"advise --no-inspect":                                             "--no-inspect needs --run DIR",
		"advise --run " + dir + " --no-inspect --engine kube":             "--engine is for inspecting this machine or, with --engine kube, a cluster's node, and --no-inspect inspects nothing: leave --engine out",
		"advise --run " + dir + " --no-inspect --engine local":            "--engine is for inspecting",
		"advise --run " + dir + " --no-inspect --kubeconfig /nonexistent": "--kubeconfig is for inspecting",
		"advise --run " + dir + " --no-inspect --server-node n1":          "leave --server-node out (--no-inspect reads a run of either engine without it)",
		"advise --run " + dir + " --no-inspect --cni-conf-dir /etc/cni":   "leave --cni-conf-dir out",
		"advise --run " + dir + " --no-inspect --study rps-rfs":           "--study needs --prove",
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), strings.Fields(args), &out, &errb)
		if code != ExitBadInput || !strings.Contains(errb.String(), msg) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", args, code, errb.String(), msg)
		}
		if strings.Contains(errb.String(), "needs --engine kube") {
			t.Errorf("%s: stderr %q asks for --engine kube, which --no-inspect refuses", args, errb.String())
		}
	}
	// A cluster's run under --engine local names --no-inspect as the
	// way to read it here.
	if _, err := readRun(ciRun(t, "kube"), "local"); err == nil || !strings.Contains(err.Error(), "or --no-inspect to advise from the run's env.json alone") {
		t.Errorf("a kube run under --engine local: %v", err)
	}
}

// Without root, advise --run says that --no-inspect reads the run's own
// machine; as root, or with --no-inspect, it says nothing.
func TestAdviseRootNote(t *testing.T) {
	f := &adviseFlags{fromRun: "results/A", engine: "local"}
	if n := rootNote(1000, f); !strings.Contains(n, "give --no-inspect") {
		t.Errorf("not root: %q", n)
	}
	if n := rootNote(0, f); n != "" {
		t.Errorf("root: %q", n)
	}
	f.noInspect = true
	if n := rootNote(1000, f); n != "" {
		t.Errorf("--no-inspect: %q", n)
	}
}
