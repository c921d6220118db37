// Package e2e runs the kube engine against a real two-node cluster that
// scripts/kube/up.sh builds on this machine (nodes are network
// namespaces; see docs/kubernetes.md). It is skipped unless
// CNIBENCH_KUBE_E2E=1, and needs root, Go and the Debian packages up.sh
// lists. CNIBENCH_KUBE_E2E_KEEP=1 leaves the cluster up afterwards and
// reuses one that is already up.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/hostcpus"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/metrics/nftrace"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/sysfs"
)

const (
	serverNode = "cnbk-n1"
	clientNode = "cnbk-n2"
	cpNS       = "cnbk-cp"
)

// The cluster's directories and image, as scripts/kube/env.sh takes them
// from the environment: a cluster built with CNIBENCH_KUBE_STATE (or RUN,
// IMAGE) set is the one this test reaches.
var (
	stateDir = envOr("CNIBENCH_KUBE_STATE", "/var/lib/cnibench-kube")
	runDir   = envOr("CNIBENCH_KUBE_RUN", "/run/cnibench-kube")
	image    = envOr("CNIBENCH_KUBE_IMAGE", "docker.io/cnibench/cnibench:e2e")
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// cniConfDir is the server node's CNI configuration directory (up.sh).
func cniConfDir() string { return filepath.Join(stateDir, serverNode, "net.d") }

type cluster struct {
	root, bin string
}

func setup(t *testing.T) *cluster {
	t.Helper()
	if os.Getenv("CNIBENCH_KUBE_E2E") != "1" {
		t.Skip("kube e2e: set CNIBENCH_KUBE_E2E=1 to build a two-node cluster on this machine (root, ~10 min cold)")
	}
	if os.Geteuid() != 0 {
		t.Skip("kube e2e: needs root")
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{root: filepath.Dir(strings.TrimSpace(string(out)))}
	c.bin = filepath.Join(t.TempDir(), "cnibench")
	build := exec.Command("go", "build", "-o", c.bin, "./cmd/cnibench")
	build.Dir = c.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	keep := os.Getenv("CNIBENCH_KUBE_E2E_KEEP") == "1"
	reuse := keep && exec.Command("ip", "netns", "exec", cpNS, "true").Run() == nil
	if reuse {
		t.Log("reusing the cluster that is up")
	}
	teardown := func(down func() error) {
		t.Cleanup(func() {
			if err := down(); err != nil {
				t.Error(err)
			}
		})
	}
	if err := bringUp(keep, reuse, c.bin, func(name string, args ...string) error { return c.script(t, name, args...) }, teardown); err != nil {
		t.Fatal(err)
	}
	// The administrator's step: install the agent once. The test
	// cluster's image is imported, not pushed, so it has no registry
	// digest: --allow-tag.
	install := c.cnibench("kube", "install", "--image", image, "--image-pull-policy", "Never", "--allow-tag",
		"--cni-conf-dir", cniConfDir())
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("kube install: %v\n%s", err, out)
	}
	return c
}

// bringUp starts the test cluster for a test: with keep and a cluster up
// (reuse), it re-imports the image of this binary into it; else it removes
// whatever a run before left and runs up.sh. Without keep, the teardown is
// registered before up.sh runs, so a cluster that came up only half-way
// (up.sh failed) is removed as well.
func bringUp(keep, reuse bool, bin string, script func(name string, args ...string) error, teardown func(func() error)) error {
	if reuse {
		return script("load-image.sh", bin)
	}
	if !keep {
		teardown(func() error { return script("down.sh") })
	}
	if err := script("down.sh"); err != nil {
		return err
	}
	return script("up.sh", bin)
}

// TestBringUpTearsDownAFailedUp: up.sh failing half-way still leaves the
// teardown registered (no root, no cluster: the scripts are recorded).
func TestBringUpTearsDownAFailedUp(t *testing.T) {
	var ran []string
	var teardowns []func() error
	script := func(name string, args ...string) error {
		ran = append(ran, name)
		if name == "up.sh" {
			return errors.New("up.sh: nodes not Ready")
		}
		return nil
	}
	err := bringUp(false, false, "bin", script, func(f func() error) { teardowns = append(teardowns, f) })
	if err == nil {
		t.Fatal("bringUp hid up.sh's failure")
	}
	for _, f := range teardowns {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"down.sh", "up.sh", "down.sh"}; !slices.Equal(ran, want) {
		t.Errorf("scripts run %v, want %v (down.sh after the failed up.sh)", ran, want)
	}
	ran, teardowns = nil, nil
	if err := bringUp(true, true, "bin", script, func(f func() error) { teardowns = append(teardowns, f) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"load-image.sh"}; !slices.Equal(ran, want) || len(teardowns) != 0 {
		t.Errorf("keep with a cluster up: ran %v and %d teardowns, want %v and none", ran, len(teardowns), want)
	}
}

// TestClusterPathsFollowEnv: the paths the test passes to cnibench are
// those of the cluster env.sh builds, wherever CNIBENCH_KUBE_STATE puts it.
func TestClusterPathsFollowEnv(t *testing.T) {
	if got := envOr("CNIBENCH_TEST_UNSET_VARIABLE", "/var/lib/cnibench-kube"); got != "/var/lib/cnibench-kube" {
		t.Errorf("default: %s", got)
	}
	t.Setenv("CNIBENCH_KUBE_STATE", "/srv/kube-state")
	if got := envOr("CNIBENCH_KUBE_STATE", "/var/lib/cnibench-kube"); got != "/srv/kube-state" {
		t.Errorf("CNIBENCH_KUBE_STATE=/srv/kube-state: %s", got)
	}
	old := stateDir
	t.Cleanup(func() { stateDir = old })
	stateDir = "/srv/kube-state"
	if got, want := cniConfDir(), "/srv/kube-state/cnbk-n1/net.d"; got != want {
		t.Errorf("cniConfDir %s, want %s", got, want)
	}
}

// script runs scripts/kube/NAME, logging the end of its output.
func (c *cluster) script(t *testing.T, name string, args ...string) error {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.root, "scripts/kube", name), args...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s: %s", name, tail(out, 2000))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// cnibench runs the binary in the control-plane namespace, where the API
// server is reachable.
func (c *cluster) cnibench(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.root, "scripts/kube/exec.sh"), append([]string{c.bin}, args...)...)
	return cmd
}

// kubeArgs are a run's cluster flags; the CNI config directory is the
// installed agent's (kube install's --cni-conf-dir), which runs refuse.
func kubeArgs() []string {
	return []string{"--engine", "kube", "--image", image, "--image-pull-policy", "Never"}
}

// knobs reads the RPS/RFS values of the nodes that runs change: the
// server's (keyed by path) and the client's (by node and path: a tuning
// with side: both).
func knobs(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, node := range []string{serverNode, clientNode} {
		for _, f := range []string{"rps_cpus", "rps_flow_cnt"} {
			p := "/sys/class/net/eth1/queues/rx-0/" + f
			out, err := exec.Command("ip", "netns", "exec", node, "cat", p).Output()
			if err != nil {
				t.Fatalf("read %s in %s: %v", p, node, err)
			}
			k := p
			if node == clientNode {
				k = node + ":" + p
			}
			m[k] = strings.TrimSpace(string(out))
		}
	}
	b, err := os.ReadFile("/proc/sys/net/core/rps_sock_flow_entries")
	if err != nil {
		t.Fatal(err)
	}
	m["rps_sock_flow_entries"] = strings.TrimSpace(string(b))
	// The global sysctl the kill test's tuning sets.
	if b, err = os.ReadFile("/proc/sys/net/core/netdev_budget"); err != nil {
		t.Fatal(err)
	}
	m["netdev_budget"] = strings.TrimSpace(string(b))
	// Each CPU's idle latency limit, which the kill test's tuning sets
	// where the kernel can (the nodes share this machine's CPUs).
	limits, _ := filepath.Glob("/sys/" + cpuidle.Dir + "/cpu[0-9]*/power/" + cpuidle.LimitKnob)
	for _, f := range limits {
		if b, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		m[f] = strings.TrimSpace(string(b))
	}
	return m
}

// idleBound is what the kill test's tuning adds where this kernel can
// bound the CPUs' idle states (probe feature cpuidle), and whether it can.
func idleBound() (string, bool) {
	if ok, _ := kerneltest.IdleBoundable(); !ok {
		return "", false
	}
	return ", cpuIdle: {maxExitLatency: 0us}", true
}

func sameKnobs(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if strings.TrimLeft(after[k], "0,") != strings.TrimLeft(v, "0,") {
			t.Errorf("%s = %q after the run, was %q", k, after[k], v)
		}
	}
}

// noAgentJournalDirs checks that the agents left no journal directory:
// the test cluster's nodes share this machine's /run/cnibench (hostPath).
func noAgentJournalDirs(t *testing.T) {
	t.Helper()
	for _, n := range []string{serverNode, clientNode} {
		dir := filepath.Join("/run/cnibench/agent", n)
		if ents, err := os.ReadDir(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("agent journal directory %s left behind (%d entries, %v)", dir, len(ents), err)
		}
	}
}

func noRunObjects(t *testing.T, c *cluster) {
	t.Helper()
	out, err := c.cnibench("cleanup", "--kube", "--all", "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("cleanup --dry-run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "no kube run objects") {
		t.Errorf("run objects remain:\n%s", out)
	}
}

func TestKubeRPSRFSQuick(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	dir := filepath.Join(t.TempDir(), "run")
	// bridge is the local datapath that matches the test cluster's CNI
	// (bridge plugin + routes between nodes), so both runs label their
	// cells alike and can be set side by side.
	quick := []string{"run", "rps-rfs", "--quick", "--set", "replicas=[1,2]", "--set", "trials=1", "--set", "budget=0s", "--set", "datapaths=[bridge]"}
	// A dry run asks the cluster (its nodes' agents) and makes nothing.
	dry, err := c.cnibench(append(append(slices.Clone(quick), "--dry-run", "--out", dir), kubeArgs()...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(dry), "preflight (kube engine): passed") || !strings.Contains(string(dry), "10 cells") {
		t.Errorf("dry run: %v\n%s", err, dry)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a dry run made %s", dir)
	}
	args := append(append(quick, "--out", dir), kubeArgs()...)
	start := time.Now()
	out, err := c.cnibench(args...).CombinedOutput()
	t.Logf("run took %v:\n%s", time.Since(start), tail(out, 4000))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Env.Engine != "kube" {
		t.Errorf("env engine %q", r.Env.Engine)
	}
	if r.Env.CNI == nil || r.Env.CNI.Name != "bridge" {
		t.Errorf("detected CNI %+v, want bridge (notes %v)", r.Env.CNI, r.Env.Notes)
	}
	// How the server node's cores idle, read through its agent: the test
	// cluster's nodes run on this machine's kernel. Its limits come from
	// the node's sysfs alone (no /dev/cpu_dma_latency through the agent).
	host := cpuidle.Machine(sysfs.Dir("/sys"))
	if host != nil {
		host.Limits = cpuidle.ReadLimits(sysfs.Dir("/sys"), "")
	}
	if fmt.Sprint(r.Env.CPUIdle) != fmt.Sprint(host) {
		t.Errorf("env cpuidle %v, want the server node's (this machine's) %v", r.Env.CPUIdle, host)
	}
	want := 5 * 2 // quick tunings x replicas [1,2] x 1 trial
	if len(r.Samples) != want {
		t.Errorf("%d samples, want %d", len(r.Samples), want)
	}
	cells := map[results.Cell]bool{}
	for _, s := range r.Samples {
		cells[s.Cell] = true
		if s.Metrics[results.MetricBitrate] <= 0 {
			t.Errorf("%+v: bitrate %v", s.Cell, s.Metrics[results.MetricBitrate])
		}
		if len(s.Cores) == 0 {
			t.Errorf("%+v: no per-core CPU", s.Cell)
		}
	}
	if len(cells) != want {
		t.Errorf("%d cells, want %d", len(cells), want)
	}
	for _, f := range []string{"report.html", "summary.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// The report's header names the CNI that was measured.
	if page, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	} else if head, _, _ := strings.Cut(string(page), "<h2>"); !strings.Contains(head, "whose CNI was detected as bridge") {
		t.Errorf("report header does not name the detected CNI:\n%s", tail([]byte(head), 1500))
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)

	// The same quick study on the local engine, set beside the kube run.
	ldir := filepath.Join(t.TempDir(), "local")
	lrun := exec.Command(c.bin, append(quick, "--out", ldir)...)
	if out, err := lrun.CombinedOutput(); err != nil {
		t.Fatalf("local run: %v\n%s", err, tail(out, 3000))
	}
	lr, err := results.Load(ldir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("side by side (Gbit/s):\n%s", sideBySide(t, r, lr))
}

// sideBySide tabulates the bitrate of every cell of two runs and fails
// when their cells differ.
func sideBySide(t *testing.T, kube, local *results.Run) string {
	t.Helper()
	type row struct{ k, l float64 }
	rows := map[results.Cell]*row{}
	var order []results.Cell
	for _, s := range kube.Samples {
		if rows[s.Cell] == nil {
			rows[s.Cell] = &row{}
			order = append(order, s.Cell)
		}
		rows[s.Cell].k = s.Metrics[results.MetricBitrate] / 1e9
	}
	for _, s := range local.Samples {
		r := rows[s.Cell]
		if r == nil {
			t.Errorf("cell %+v only in the local run", s.Cell)
			continue
		}
		r.l = s.Metrics[results.MetricBitrate] / 1e9
	}
	var b strings.Builder
	b.WriteString("| datapath | tuning | replicas | kube | local |\n|---|---|---|---|---|\n")
	for _, c := range order {
		r := rows[c]
		if r.l == 0 {
			t.Errorf("cell %+v has no local sample", c)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.2f |\n", c.Datapath, c.Tuning, c.Replicas, r.k, r.l)
	}
	return b.String()
}

// kubeWorkloadsStudy runs one short trial of each workload kind besides
// plain TCP: UDP at a rate, sockperf ping-pong, qperf's 1-byte ping-pong
// (its test socket on the Service's second port), HTTP (nginx + ab) and
// TCP beside background load on two more pairs (their servers on their
// own pods' ports, through their Services).
const kubeWorkloadsStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: kube-workloads}
spec:
  datapaths: [bridge]
  tunings: [baseline, rfs+]
  workloads:
    - {name: udp, tool: iperf3, protocol: udp, length: "1400", rate: 300M}
    - {name: rr, tool: sockperf, protocol: tcp, messageSize: 64}
    - {name: http, tool: ab, size: 256K, concurrency: [4]}
    - {name: cost, tool: iperf3, cpp: true, counters: true}
    - {name: startup, tool: podstartup, concurrency: [5]}
    - {name: rr1, tool: qperf, protocol: tcp, messageSize: 1}
    - {name: bg, tool: iperf3, background: {connections: [4], pairs: 2, rate: 10M}}
  replicas: [1]
  trials: 1
  duration: 4s
  warmup: 1s
`

// TestKubeWorkloads runs UDP, request/response and HTTP workloads on the
// cluster: the same drivers and parsers as the local engine, tools exec'd
// in the pods, nginx's site written inside the server pod; and a TCP
// workload with CPU cost per packet (perf in the server node's agent) and
// device, iptables and nftables counters read through the agents. The
// test cluster has no cluster DNS, so clients get the Services'
// ClusterIPs (the DNS path is unit-tested in package kube). A pod
// start-up burst of 5 pods on the server node is timed create to Ready.
func TestKubeWorkloads(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	file := filepath.Join(t.TempDir(), "kube-workloads.yaml")
	if err := os.WriteFile(file, []byte(kubeWorkloadsStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	out, err := c.cnibench(append([]string{"run", file, "--out", dir}, kubeArgs()...)...).CombinedOutput()
	t.Logf("run took %v:\n%s", time.Since(start), tail(out, 4000))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Env.Notes, func(n string) bool {
		return strings.Contains(n, "by their Service ClusterIP") && strings.Contains(n, "no cluster DNS Service")
	}) {
		t.Errorf("env notes do not record the ClusterIP fallback and why: %v", r.Env.Notes)
	}
	// The test cluster's nodes run on this machine's kernel: one boot ID,
	// so their CPU % and memory are recorded once, as the client's.
	if !slices.ContainsFunc(r.Env.Notes, func(n string) bool { return strings.Contains(n, "report one boot ID") }) {
		t.Errorf("env notes do not say the nodes share a kernel: %v", r.Env.Notes)
	}
	if !r.Env.SharedKernel {
		t.Error("env.json does not record the shared kernel (shared_kernel), which the report's comparability text reads")
	}
	// Each node's CPUs are its online ones as its agent read them: this
	// machine's here.
	online, err := hostcpus.Online()
	if err != nil {
		t.Fatal(err)
	}
	for node, cpus := range r.Env.NodeCPUs {
		if cpuset.Set(cpus).String() != online.String() {
			t.Errorf("env.json node_cpus of %s: %v, want the online CPUs %v", node, cpus, online)
		}
	}
	if _, ok := r.Env.NodeCPUs[serverNode]; !ok {
		t.Errorf("env.json node_cpus %v lacks the server node %s", r.Env.NodeCPUs, serverNode)
	}
	// The run's command keeps the cluster flags (a rerun must reach the
	// same cluster), in name order, and leaves out --out.
	if o := r.Env.Origin; o == nil || strings.Join(o.Command, " ") != "cnibench run "+file+" --engine kube --image "+image+" --image-pull-policy Never" {
		t.Errorf("env.json's origin %+v, want the command with its cluster flags", o)
	}
	for _, s := range r.Samples {
		if _, ok := s.Metrics["node_cpu_percent_server"]; ok {
			t.Errorf("%+v: node_cpu_percent_server recorded beside the client's reading of the same kernel", s.Cell)
		}
	}
	got := map[string]map[string]float64{}
	for _, s := range r.Samples {
		if s.Cell.Tuning == "baseline" {
			got[s.Cell.Workload] = s.Metrics
		}
		if len(s.Cores) == 0 {
			t.Errorf("%+v: no per-core CPU", s.Cell)
		}
		// sockperf's window opens when its client prints that its test
		// begins, read from the exec's stream as printed: opened at the
		// client's start, the trial would end 2 s late (sockperf sleeps
		// before its test).
		if s.Cell.Workload == "rr" && (s.Noise == nil || s.Noise.EndLateS > 1.5) {
			t.Errorf("%+v: noise %+v: the trial ended more than 1.5 s after its window's planned end", s.Cell, s.Noise)
		}
	}
	for wl, m := range got {
		t.Logf("%s: %v", wl, m)
	}
	if len(r.Samples) != 14 {
		t.Errorf("%d samples, want 14 (7 workloads x 2 tunings)", len(r.Samples))
	}
	unit := "ns"
	if _, ok := got["cost"]["cpp_total_cycles"]; ok {
		unit = "cycles"
	}
	for wl, keys := range map[string][]string{
		"udp":  {"bitrate", "packets_count", "offered_bps"},
		"rr":   {"transactions_per_s", "rtt_p99_us"},
		"http": {"requests_per_s", "latency_p50_ms", "requests_count"},
		"rr1":  {"transactions_per_s", "rtt_mean_us", "half_rtt_mean_us"},
		"bg":   {"bitrate", "background_bitrate_bps", "background_connections_count"},
		// One concurrency value is no sweep: the workload keeps its name.
		// The kubelet may report the sandbox condition and Ready in one
		// status update, so the containers step can read 0.
		"startup": {"startup_ms", "startup_max_ms", "pod_start_ms", "teardown_ms", "phase_create_ms", "phase_sandbox_ms"},
		// perf on the server node attributes kernel time of the flow;
		// kube-proxy's Service rules (iptables-nft) are on the path.
		"cost": {"bitrate", "cpp_total_" + unit, "cpp_tcp_udp_" + unit, "cpp_packets_count", "if_pods_rx_packets_count",
			"if_underlay_rx_packets_count", "node_memory_percent_client", "node_cpu_percent_client", "iptables_rules_count", "iptables_path_rules_count",
			"nft_rules_count", "nft_counted_rules_count", "nft_path_rules_count",
			// The measured packets' own path, traced through the agents.
			"trace_path_chains_count", "trace_path_rules_count", "trace_packets_count",
			// The nodes' network daemons, read by their agents: the
			// test cluster runs kube-proxy in each node's namespace.
			"daemon_kube-proxy_" + serverNode + "_rss_bytes", "daemon_kube-proxy_" + clientNode + "_rss_bytes"},
	} {
		for _, k := range keys {
			if got[wl][k] <= 0 {
				t.Errorf("%s: %s = %v (metrics %v)", wl, k, got[wl][k], got[wl])
			}
		}
	}
	// The counters also count the node's own traffic (the kubelet's, the
	// API server's exec streams through INPUT and OUTPUT); the trace
	// counts the measured packets' path alone, so fewer rules.
	if m := got["cost"]; m["trace_path_rules_count"] >= m["iptables_path_rules_count"] {
		t.Errorf("traced path %v rules, counted %v: the trace should leave the node's own traffic out",
			m["trace_path_rules_count"], m["iptables_path_rules_count"])
	}
	noTraceTables(t)
	if m := got["bg"]; m["background_connections_count"] != 4 || m["message_bytes"] != 0 {
		t.Errorf("bg: %v", m)
	}
	if m := got["rr1"]; m["message_bytes"] != 1 {
		t.Errorf("rr1: %v", m)
	}
	if m := got["http"]; m["errors_count"] != 0 || m["body_bytes"] != 256<<10 {
		t.Errorf("http: %v", m)
	}
	// Whole pods: pod_start_ms, never setup_ms, which the paper's
	// network share is set beside.
	if _, network := got["startup"]["setup_ms"]; network {
		t.Errorf("startup on kube reports setup_ms: %v", got["startup"])
	}
	if m := got["startup"]; m["pods"] != 5 || m["startup_max_ms"] < m["pod_start_ms"] {
		t.Errorf("startup: %v", m)
	} else if _, ok := m["phase_containers_ms"]; !ok {
		t.Errorf("startup: no containers step: %v", m)
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)
}

// noTraceTables checks that no node keeps a trace table.
func noTraceTables(t *testing.T) {
	t.Helper()
	for _, n := range []string{serverNode, clientNode} {
		out, err := exec.Command("ip", "netns", "exec", n, "nft", "list", "tables").CombinedOutput()
		if err != nil {
			t.Errorf("nft list tables on %s: %v: %s", n, err, out)
		} else if strings.Contains(string(out), nftrace.TablePrefix) {
			t.Errorf("a trace table is left on %s:\n%s", n, out)
		}
	}
}

// TestKubeKillAndCleanup kills the controller while a tuning is applied
// (an RPS mask, a global sysctl and where the kernel can the CPUs' idle
// latency limit at both ends, side: both, written through each node's
// agent) and checks that `cleanup --kube` leaves no
// object and no changed knob on either node.
func TestKubeKillAndCleanup(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	budget := "301"
	if before["netdev_budget"] == budget {
		budget = "302"
	}
	dir := filepath.Join(t.TempDir(), "run")
	bound, idle := idleBound()
	t.Logf("the tuning bounds the CPUs' idle states too: %v", idle)
	args := append([]string{"run", "rps-rfs", "--quick", "--set", "replicas=[1]", "--set", "trials=3",
		"--set", "tunings=[baseline,{name: rps, side: both, rps: {cpus: all}, sysctls: {net.core.netdev_budget: " + budget + "}" + bound + "}]",
		"--set", "duration=20s", "--out", dir}, kubeArgs()...)
	cmd := c.cnibench(args...)
	var out lockedBuffer // read after the Kill below, before the run is gone
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until the RPS mask is on the server node's eth1.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	applied := false
	for !applied {
		select {
		case err := <-done:
			t.Fatalf("run ended before the tuning was seen: %v\n%s", err, out.String())
		case <-ctx.Done():
			cmd.Process.Kill()
			t.Fatalf("tuning never applied:\n%s", out.String())
		case <-time.After(500 * time.Millisecond):
		}
		now := knobs(t)
		applied = strings.Trim(now["/sys/class/net/eth1/queues/rx-0/rps_cpus"], "0,") != strings.Trim(before["/sys/class/net/eth1/queues/rx-0/rps_cpus"], "0,")
		// The sysctl is written before the masks (tune.Plan's order).
		if applied && now["netdev_budget"] != budget {
			t.Errorf("the tuning's mask is on, its sysctl not: netdev_budget %s, want %s", now["netdev_budget"], budget)
		}
		// So is the idle limit, written through the agents.
		if cpu0 := "/sys/" + cpuidle.LimitPath(0); applied && idle && now[cpu0] != "n/a" {
			t.Errorf("the tuning's mask is on, its idle limit not: %s = %q, want n/a", cpu0, now[cpu0])
		}
	}
	// The client end follows the server's within the same trial's knobs.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		const k = clientNode + ":/sys/class/net/eth1/queues/rx-0/rps_cpus"
		if applied = strings.Trim(knobs(t)[k], "0,") != strings.Trim(before[k], "0,"); applied {
			break
		}
	}
	if !applied {
		t.Errorf("side: both, but the client node's eth1 has no RPS mask while the server's has")
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	t.Logf("killed the controller mid-run:\n%s", tail([]byte(out.String()), 2000))
	// Cleanup watches the run's Lease until it has gone unrenewed for
	// LeaseSeconds (kube.ObserveLeases), then removes the run.
	cl, err := c.cnibench("cleanup", "--kube").CombinedOutput()
	t.Logf("cleanup --kube:\n%s", cl)
	if err != nil {
		t.Fatalf("cleanup --kube: %v", err)
	}
	if !strings.Contains(string(cl), "deleted lease/") {
		t.Errorf("cleanup deleted no run Lease")
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}

// TestKubeRestrictedRole runs a study as a service account that has only
// the Roles of `cnibench kube manifests --rbac` (no right to create pods
// in the agent's privileged namespace, workload pods under Pod Security
// baseline): the run succeeds through the installed agent, and the same
// account cannot create a privileged pod in either namespace.
func TestKubeRestrictedRole(t *testing.T) {
	c := setup(t)
	tmp := t.TempDir()
	helper := filepath.Join(tmp, "rbachelper")
	build := exec.Command("go", "build", "-o", helper, "./internal/engine/kube/e2e/rbachelper")
	build.Dir = c.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build helper: %v\n%s", err, out)
	}
	kc := filepath.Join(tmp, "restricted.kubeconfig")
	if out, err := c.inCP(helper, "setup", kc).CombinedOutput(); err != nil {
		t.Fatalf("set up the restricted account: %v\n%s", err, out)
	}
	before := knobs(t)
	dir := filepath.Join(tmp, "run")
	args := append([]string{"run", "rps-rfs", "--quick", "--set", "replicas=[1]", "--set", "trials=1", "--set", "budget=0s",
		"--set", "tunings=[baseline,rfs]", "--set", "datapaths=[bridge]", "--out", dir, "--kubeconfig", kc}, kubeArgs()...)
	out, err := c.cnibench(args...).CombinedOutput()
	t.Logf("restricted run:\n%s", tail(out, 3000))
	if err != nil {
		t.Fatalf("run with the restricted Role: %v", err)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Samples) != 2 {
		t.Errorf("%d samples, want 2", len(r.Samples))
	}
	out, err = c.inCP(helper, "privileged", kc).CombinedOutput()
	t.Logf("privileged pod attempts:\n%s", out)
	if err != nil {
		t.Errorf("the restricted account must not create a privileged pod: %v", err)
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
}

// inCP runs any program in the control-plane namespace with the
// admin kubeconfig (scripts/kube/exec.sh).
func (c *cluster) inCP(prog string, args ...string) *exec.Cmd {
	return exec.Command(filepath.Join(c.root, "scripts/kube/exec.sh"), append([]string{prog}, args...)...)
}

// TestKubeAdviseProve inspects the server node through its agent and
// proves the rfs candidate with an A/B run on the cluster: the page names
// the node, the candidate has an interval and a verdict, the node's
// knobs are back and no run object is left. The test cluster's nodes are
// network namespaces whose underlay eth1 is a veth: a virtual NIC to the
// inspection, whose one rx queue and two CPUs make rfs a candidate.
func TestKubeAdviseProve(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	tmp := t.TempDir()
	studyFile := filepath.Join(tmp, "ab.yaml")
	if err := os.WriteFile(studyFile, []byte(`apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: kube-ab}
spec:
  datapaths: [bridge]
  tunings: [baseline]
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
  replicas: [1]
  trials: {min: 2, max: 3}
  duration: 4s
  warmup: 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "advice")
	args := append([]string{"advise", "--prove", "--rule", "rfs", "--study", studyFile, "--budget", "3m", "--out", out}, kubeArgs()...)
	o, err := c.cnibench(args...).CombinedOutput()
	t.Logf("advise --engine kube --prove:\n%s", tail(o, 3000))
	if err != nil {
		t.Fatalf("advise: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "advice.json"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, "node "+serverNode+" (through the cnibench agent)") {
		t.Errorf("the page does not name the inspected node")
	}
	if !strings.Contains(page, `"kernel": "`) || !strings.Contains(page, `"underlay": "eth1"`) {
		t.Errorf("the agent's inspection lacks the node's kernel or underlay:\n%s", tail(b, 3000))
	}
	if cpuidle.Machine(sysfs.Dir("/sys")) != nil && !strings.Contains(page, `"cpuidle": {`) {
		t.Errorf("the agent's inspection lacks how the node's CPUs idle (this machine's kernel has cpuidle):\n%s", tail(b, 3000))
	}
	if !strings.Contains(page, `"virtual": true`) {
		t.Errorf("the veth underlay is not recorded as a virtual NIC:\n%s", tail(b, 3000))
	}
	if !strings.Contains(page, `"proof"`) || !strings.Contains(page, "rfs-underlay/baseline") {
		t.Errorf("rfs was not proven by an A/B run through the agent:\n%s", tail(b, 3000))
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)
}

// TestKubeAPIServerStopped freezes the API server (SIGSTOP) for longer
// than a request's deadline in the middle of a run, then lets it go on.
// Whatever the run made of it (carried on, or failed on a request that
// timed out), it must end, and then its teardown or `cleanup --kube`
// leaves no run object, no changed knob and no agent journal.
func TestKubeAPIServerStopped(t *testing.T) {
	c := setup(t)
	before := knobs(t)
	pidb, err := os.ReadFile(filepath.Join(runDir, "kube-apiserver.pid"))
	if err != nil {
		t.Fatalf("the API server's pid: %v", err)
	}
	var apiserver int
	if _, err := fmt.Sscan(string(pidb), &apiserver); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"run", "rps-rfs", "--quick", "--set", "replicas=[1]", "--set", "trials=2",
		"--set", "tunings=[baseline,rps]", "--set", "duration=10s", "--set", "budget=0s", "--out", dir}, kubeArgs()...)
	cmd := c.cnibench(args...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { syscall.Kill(apiserver, syscall.SIGCONT) })
	// Wait for the first trial, then freeze the API server.
	deadline := time.Now().Add(4 * time.Minute)
	for !strings.Contains(out.String(), "[1/") {
		select {
		case err := <-done:
			t.Fatalf("run ended before its first trial: %v\n%s", err, out.String())
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no trial started:\n%s", out.String())
		}
	}
	if err := syscall.Kill(apiserver, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(45 * time.Second) // beyond the 30 s request deadline
	if err := syscall.Kill(apiserver, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(6 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the run did not end within 6 minutes of the API server's return:\n%s", tail([]byte(out.String()), 3000))
	}
	t.Logf("run after a 45 s API outage: %v\n%s", runErr, tail([]byte(out.String()), 2000))
	if runErr != nil {
		// A failed run's Lease is no longer renewed: cleanup watches it
		// go unrenewed, then takes over.
		cl, err := c.cnibench("cleanup", "--kube").CombinedOutput()
		t.Logf("cleanup --kube:\n%s", cl)
		if err != nil {
			t.Fatalf("cleanup --kube: %v", err)
		}
	}
	noRunObjects(t, c)
	sameKnobs(t, before, knobs(t))
	noAgentJournalDirs(t)
}

// lockedBuffer is a bytes.Buffer the command writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
