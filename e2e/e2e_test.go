// Package e2e runs the cnibench binary as a user would: bad input,
// a small real run, Ctrl-C and kill -9 in the middle of a run followed by
// `cnibench cleanup`. Every test checks that the host is left as found.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/results"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := suiteTempDir(os.TempDir())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e temporary directory:", err)
		os.Exit(1)
	}
	// Everything the suite and its runs make in the temporary directory
	// (t.TempDir, the runs' own TMPDIR) goes below dir, which a later
	// suite removes if this one dies before its RemoveAll (a test
	// binary's timeout panics past it; kill -9).
	os.Setenv("TMPDIR", dir)
	// CNIBENCH_E2E_BIN names a binary built beforehand: inside the
	// full-kernel VM (scripts/vm/go-test-exec.sh) the guest has no build
	// cache and little memory, so the host builds it.
	if bin = os.Getenv("CNIBENCH_E2E_BIN"); bin == "" {
		bin = filepath.Join(dir, "cnibench")
		build := exec.Command("go", "build", "-o", bin, "../cmd/cnibench")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build cnibench:", err)
			os.Exit(1)
		}
	}
	unignoreStopSignals()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// suitePrefix names the suite's temporary directory under base; the
// PID namespace and process ID after it say whether the suite that made
// it still runs (a /tmp shared across PID namespaces, a container's,
// holds suites whose IDs mean nothing here: only this namespace's are
// judged).
const suitePrefix = "cnibench-e2e-"

// suiteTempDir makes this suite's temporary directory under base, after
// removing those of this PID namespace's suites that are gone (whose
// process is no longer there; one with this process's ID, reused since,
// is made anew). One it cannot remove is said and left: it must not stop
// every later suite.
func suiteTempDir(base string) (string, error) {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", err
	}
	// "pid:[4026531836]" -> "4026531836"
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	mine := suitePrefix + ns + "-"
	old, err := filepath.Glob(filepath.Join(base, mine+"*"))
	if err != nil {
		return "", err
	}
	for _, d := range old {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), mine))
		if err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // its suite still runs (or another user's process has the ID)
		}
		if err := os.RemoveAll(d); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: a gone suite's %s stays: %v\n", d, err)
		}
	}
	// 0755 past the umask: nginx's workers, which drop root, reach
	// their site in a run's temporary directory below it.
	dir := filepath.Join(base, mine+strconv.Itoa(os.Getpid()))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// unignoreStopSignals gives the runs the tests start the default
// disposition of the signals the tests stop them with. A signal ignored
// when a process starts stays ignored across exec, and cnibench keeps
// SIGHUP and SIGINT ignored where it found them so (nohup): a suite
// started under nohup, or as a background job of a script (which
// ignores SIGINT), sent them in vain. A handler does not survive exec,
// so handling them here (and dropping what arrives) starts each child
// with the default.
func unignoreStopSignals() {
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
}

const (
	sockFlow = "/proc/sys/net/core/rps_sock_flow_entries"
	// netdevBudget is the global sysctl a tuning of the resume test sets.
	netdevBudget = "/proc/sys/net/core/netdev_budget"
)

// hostState is what a run may change and must put back.
type hostState struct {
	namespaces []string
	sockFlow   string
	budget     string
	// idle is every CPU's PM QoS resume latency limit (a cpuIdle tuning
	// of the resume test sets them).
	idle string
}

func snapshot(t *testing.T) hostState {
	t.Helper()
	var s hostState
	ents, _ := os.ReadDir("/var/run/netns")
	for _, e := range ents {
		// "cnb-t..." belongs to other packages' kernel tests, which may run
		// at the same time; run IDs are hex and never start with "t".
		if strings.HasPrefix(e.Name(), "cnb-") && !strings.HasPrefix(e.Name(), "cnb-t") {
			s.namespaces = append(s.namespaces, e.Name())
		}
	}
	b, err := os.ReadFile(sockFlow)
	if err == nil {
		s.sockFlow = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(netdevBudget); err == nil {
		s.budget = strings.TrimSpace(string(b))
	}
	limits, _ := filepath.Glob("/sys/" + cpuidle.Dir + "/cpu[0-9]*/power/" + cpuidle.LimitKnob)
	for _, f := range limits {
		b, _ := os.ReadFile(f)
		s.idle += f + "=" + strings.TrimSpace(string(b)) + "\n"
	}
	return s
}

// assertUntouched compares the host with a snapshot, ignoring namespaces
// of other runs that existed before.
func assertUntouched(t *testing.T, before hostState, runPrefix string) {
	t.Helper()
	after := snapshot(t)
	if after.sockFlow != before.sockFlow {
		t.Errorf("rps_sock_flow_entries is %s, was %s", after.sockFlow, before.sockFlow)
	}
	if after.budget != before.budget {
		t.Errorf("netdev_budget is %s, was %s", after.budget, before.budget)
	}
	if after.idle != before.idle {
		t.Errorf("the CPUs' idle latency limits are\n%swere\n%s", after.idle, before.idle)
	}
	old := map[string]bool{}
	for _, n := range before.namespaces {
		old[n] = true
	}
	for _, n := range after.namespaces {
		if !old[n] && (runPrefix == "" || strings.HasPrefix(n, runPrefix)) {
			t.Errorf("namespace %s left behind", n)
		}
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func cnibench(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return cnibenchFor(t, 5*time.Minute, env, args...)
}

// cnibenchFor runs the binary with a limit on its time.
func cnibenchFor(t *testing.T, limit time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cnibench: %v", err)
	}
	return result{out.String(), errb.String(), code}
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (the local engine creates namespaces)")
	}
}

func requireTool(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("skipped: %s not installed", tool)
	}
}

// writeStudy writes a small study file for a test.
func writeStudy(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyStudy = `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: tiny
spec:
  datapaths: [%s]
  tunings: [%s]
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
  replicas: [1]
  trials: 1
  duration: %s
  warmup: 1s
`

func TestBadInputExitsTwoAndTouchesNothing(t *testing.T) {
	malformed := writeStudy(t, "apiVersion: cnibench/v1alpha1\nkind: Study\nspec:\n  datapaths: [calico-vxlan\n")
	emptyPath := t.TempDir()
	// Problems found at preflight, against this machine, are reported at
	// their line too.
	noSuchCPU := writeStudy(t, fmt.Sprintf(tinyStudy, "bridge", "baseline", "3s")+"  nodes:\n    server: {cpus: \"1000\"}\nprofiles:\n  quick: {trials: 1}\n")
	// A profile's value that makes the file's own text wrong is named
	// beside the file's line.
	profileDrops := writeStudy(t, strings.Replace(fmt.Sprintf(tinyStudy, "bridge", "baseline", "3s"), "replicas: [1]", "replicas: [1, 2]\n  only: [{replicas: 2}]", 1)+"profiles:\n  quick: {replicas: [1]}\n")
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown datapath", nil, []string{"--set", "datapaths=[nosuch]"}, `unknown datapath "nosuch"`},
		{"unknown tuning", nil, []string{"--set", "tunings=[baseline,warp]"}, `unknown tuning "warp"`},
		{"zero replicas", nil, []string{"--set", "replicas=[1,0]"}, "replica count must be between 1 and"},
		{"negative replicas", nil, []string{"--set", "replicas=[-2]"}, "replica count must be between 1 and"},
		{"duration not above warm-up", nil, []string{"--set", "duration=2s", "--set", "warmup=2s"}, "must be longer than warmup"},
		{"malformed yaml", nil, []string{"FILE:" + malformed}, "malformed YAML"},
		{"missing study", nil, []string{"FILE:/nonexistent/study.yaml"}, `study "/nonexistent/study.yaml": no such file`},
		{"missing iperf3", []string{"PATH=" + emptyPath}, nil, "spec.workloads[0].tool: workload tcp: iperf3"},
		{"CPUs this machine lacks", nil, []string{"FILE:" + noSuchCPU}, "study.yaml:15: spec.nodes.server.cpus: CPU 1000 does not exist"},
		{"only a profile's replicas drop", nil, []string{"FILE:" + profileDrops}, `study.yaml:11: with profile "quick" (replicas, line 16): spec.only[0].replicas: the study has no replica count "2"`},
		{"mss above two datapaths' pod MTU", nil, []string{"--set", "datapaths=[flannel-vxlan, calico-vxlan]", "--set", "workloads=[{name: a, tool: iperf3, mss: 1420}, {name: b, tool: iperf3, mss: 1430}]"},
			"builtin:rps-rfs (--set): spec.workloads[0]: workload a: mss 1420: datapath flannel-vxlan has pod MTU 1450, so a TCP segment carries at most 1410 bytes (MTU - 40) (calico-vxlan too); lower mss or give the datapath a larger mtu (and 1 more problem: "},
		{"mtu on host network", nil, []string{"--set", "datapaths=[{type: host, mtu: 1400}]"}, "spec.datapaths[0].mtu: datapath host has no MTU of its own"},
		{"mtu above the overlay's", nil, []string{"--set", "datapaths=[{type: flannel-vxlan, mtu: 1480}]"}, "at most 1450"},
		{"policy on a bridge", nil, []string{"--set", "datapaths=[{type: bridge, policy: wp}]"}, "only Calico's iptables policy"},
		{"bad link rate", nil, []string{"--set", "link={rate: fast}"}, `spec.link.rate: invalid rate "fast"`},
		{"path traversal name", nil, []string{"--set", "metadata.name=../../etc/x"}, "metadata.name: \"../../etc/x\": use ASCII letters"},
		{"huge flowCnt", nil, []string{"--set", "tunings=[baseline, {name: big, rps: {cpus: all}, rfs: {sockFlowEntries: 4096, flowCnt: 1073741824}}]"},
			"spec.tunings[1].rfs.flowCnt: must be between 1 and 1048576"},
		{"overflowing duration", nil, []string{"--set", "duration=2562047h"}, "spec.duration: must be at most 24h"},
		{"huge HTTP body", nil, []string{"--set", "workloads=[{name: http, tool: ab, size: 100G}]"}, "spec.workloads[0].size: size must be between 1 and 64M"},
		{"rps-7 on a one-CPU node", nil, []string{"--set", "nodes={server: {cpus: \"0\"}}", "--set", "tunings=[baseline, rps-7]"},
			"builtin:rps-rfs (--set): spec.tunings[1].rps.cpus: tuning rps-7: rps cpus all-but-softirq-core: the server node has only CPU 0, none is left without it"},
		{"unknown flag", nil, []string{"--frobnicate"}, "unknown flag"},
		{"unknown engine", nil, []string{"--engine", "mesos"}, `unknown engine "mesos"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jdir := t.TempDir()
			out := filepath.Join(t.TempDir(), "run")
			target := "rps-rfs"
			var extra []string
			for _, a := range tc.args {
				if strings.HasPrefix(a, "FILE:") {
					target = strings.TrimPrefix(a, "FILE:")
				} else {
					extra = append(extra, a)
				}
			}
			before := snapshot(t)
			args := append([]string{"run", target, "--quick", "--out", out, "--journal-dir", jdir}, extra...)
			r := cnibench(t, tc.env, args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != 1 {
				t.Errorf("want one error line, got %d:\n%s", len(lines), r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not name the problem (%q)", r.stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("run directory %s was created", out)
			}
			if ents := runLeftovers(jdir); len(ents) != 0 {
				t.Errorf("journal written: %v", ents)
			}
			assertUntouched(t, before, "")
		})
	}
}

func TestShowAndStudies(t *testing.T) {
	r := cnibench(t, nil, "studies")
	if r.code != 0 || !strings.Contains(r.stdout, "rps-rfs") {
		t.Fatalf("studies: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Profiles in name order, the same every time.
	if !strings.Contains(r.stdout, "paper,quick,quick-none") {
		t.Errorf("studies: flannel-backends' profiles not listed in order:\n%s", r.stdout)
	}
	r = cnibench(t, nil, "show", "rps-rfs", "--quick", "--set", "trials=3")
	if r.code != 0 || !strings.Contains(r.stdout, "trials: 3") || !strings.Contains(r.stdout, "replicas:") {
		t.Fatalf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, cmd := range []string{"run", "studies", "show", "report", "cleanup", "doctor", "compare"} {
		r := cnibench(t, nil, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, no example:\n%s", cmd, r.code, r.stdout)
		}
	}
}

// A real (small) run writes every file and leaves the host as it was.
func TestRunWritesEverythingAndLeavesNothing(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	before := snapshot(t)
	study := writeStudy(t, fmt.Sprintf(tinyStudy, "calico-vxlan, flannel-vxlan", "baseline, rfs+", "3s"))
	r := cnibench(t, nil, "run", study, "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"study.yaml", "env.json", "samples.jsonl", "cpu.jsonl", "summary.csv", "summary.json", "summary.md", "report.html"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	// A trial disturbed by something else on the machine is recorded and
	// repeated (the noise guard), so count the trials analysis counts.
	run, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(run.Samples); n != 4 {
		t.Errorf("%d counted samples, want 4 (2 datapaths x 2 tunings); %d marked", n, len(run.Marked))
	}
	for _, m := range run.Marked {
		t.Logf("marked attempt %+v: %s", m.Cell, m.Discarded)
	}
	if !run.Env.SharedKernel {
		t.Error("env.json: the local engine's nodes share the kernel, shared_kernel not recorded")
	}
	if o := run.Env.Origin; o == nil || strings.Join(o.Command, " ") != "cnibench run "+study {
		t.Errorf("env.json: origin %+v, want the command without --out and --journal-dir", o)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "summary.csv"))
	if !bytes.HasPrefix(csv, []byte("datapath,tuning,workload,replicas,metric,cpu,unit,n,mean,sd,ci95_low,ci95_high,normalized,normalized_ci95_low,normalized_ci95_high")) {
		t.Errorf("summary.csv header: %s", bytes.SplitN(csv, []byte("\n"), 2)[0])
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if n := bytes.Count(html, []byte("<svg")); n < 3 {
		t.Errorf("report.html has %d figures, want >= 3", n)
	}
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("journal left behind: %v", ents)
	}
	assertUntouched(t, before, "")
	// A run compared with itself: every ratio is 1, and it says so.
	if r := cnibench(t, nil, "compare", out, out); r.code != 0 || !strings.Contains(r.stdout, "| 1.000") || !strings.Contains(r.stdout, "same run directory") {
		t.Errorf("compare with itself: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The report rebuilds from the raw files alone.
	for _, f := range []string{"summary.csv", "summary.json", "summary.md", "report.html"} {
		os.Remove(filepath.Join(out, f))
	}
	if r := cnibench(t, nil, "report", out); r.code != 0 {
		t.Fatalf("report: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Error("report did not rebuild report.html")
	}
}

// The datapath knobs of a study file take effect: a pod MTU override,
// tunnel offload off on the underlay, Calico policy chains and a shaped
// line rate, each recorded in env.json, and nothing is left behind.
func TestDatapathKnobs(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	requireTool(t, "ethtool")
	requireTool(t, "iptables-restore")
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("skipped: reference CNI plugins not installed (apt-get install containernetworking-plugins)")
	}
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	before := snapshot(t)
	study := writeStudy(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata: {name: knobs}
spec:
  datapaths:
    - {name: flannel-off, type: flannel-vxlan, mtu: 1400, offloads: {tx-udp_tnl-segmentation: off}}
    - {name: calico-wp, type: calico-routed, policy: wp}
    - {name: flannel-cni, type: flannel-vxlan, wiring: cni}
  link: {rate: 200mbit}
  tunings: [baseline]
  workloads: [{name: tcp, tool: iperf3}]
  replicas: [1]
  trials: 1
  duration: 3s
  warmup: 1s
`)
	r := cnibench(t, nil, "run", study, "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var env results.Env
	b, _ := os.ReadFile(filepath.Join(out, "env.json"))
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	off, wp := env.Datapaths["flannel-off"], env.Datapaths["calico-wp"]
	if off.PodMTU != 1400 || off.LinkRate != 200_000_000 {
		t.Errorf("flannel-off: %+v", off)
	}
	if len(off.Offloads) == 0 || !strings.HasPrefix(off.Offloads[0], "tx-udp_tnl-segmentation off on server/eth1") || !strings.Contains(off.Offloads[0], "client/eth1") {
		t.Errorf("flannel-off offloads: %q", off.Offloads)
	}
	if wp.Policy == nil || wp.Policy.Mode != "wp" || wp.Policy.Chains["server"] < 8 || wp.Policy.Rules["server"] < 20 {
		t.Errorf("calico-wp policy: %+v", wp.Policy)
	}
	// Whether bridged frames pass iptables is read in the server node:
	// "absent" exactly when br_netfilter is not loaded on this kernel.
	_, err := os.Stat("/proc/sys/net/bridge/bridge-nf-call-iptables")
	for name, d := range env.Datapaths {
		if v := d.BridgeNFCallIPTables; (v == "absent") != os.IsNotExist(err) || v == "" {
			t.Errorf("%s: bridge_nf_call_iptables %q, host's file: %v", name, v, err)
		}
	}
	run, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, smp := range run.Samples {
		// Shaped at 200 Mbit/s: a single TCP flow gets most of it, never more.
		if bps := smp.Metrics[results.MetricBitrate]; !(bps > 100e6 && bps <= 200e6) {
			t.Errorf("%s: %.0f bit/s on a 200 Mbit/s link", smp.Cell.Datapath, bps)
		}
	}
	if len(run.Samples) != 3 {
		t.Errorf("%d samples, want 3", len(run.Samples))
	}
	// Pod network setup and teardown are timed for both wirings; the
	// plugins (separate processes) take longer than netlink calls.
	cni, nl := env.Datapaths["flannel-cni"].PodNetwork, off.PodNetwork
	if cni == nil || nl == nil || cni.Pods != 2 || cni.TeardownPods != 2 || !(cni.SetupMedianMs > 0) || !(nl.TeardownMedianMs > 0) {
		t.Fatalf("pod network times: cni %+v netlink %+v", cni, nl)
	}
	if env.Datapaths["flannel-cni"].Wiring != "cni" {
		t.Errorf("flannel-cni wiring %q", env.Datapaths["flannel-cni"].Wiring)
	}
	t.Logf("pod network setup median: netlink %.1f ms, cni %.1f ms; teardown: netlink %.1f ms, cni %.1f ms",
		nl.SetupMedianMs, cni.SetupMedianMs, nl.TeardownMedianMs, cni.TeardownMedianMs)
	assertUntouched(t, before, "")
}

// startLongRun starts a run that changes the global RFS table and waits
// until the change is in place; it returns the command and the run ID.
func startLongRun(t *testing.T, jdir string) (*exec.Cmd, string) {
	t.Helper()
	var errb syncBuffer // read by startLongRunOut while the run writes
	return startLongRunOut(t, jdir, &errb, &errb)
}

// startLongRunOut is startLongRun with the run's output going where the
// test says: a file or a syncBuffer, since it prints stderr while the run
// may still write to it (a bytes.Buffer there is a data race).
func startLongRunOut(t *testing.T, jdir string, stdout, stderr io.Writer) (*exec.Cmd, string) {
	t.Helper()
	study := writeStudy(t, fmt.Sprintf(tinyStudy, "flannel-vxlan", "rfs", "60s"))
	cmd := startCnibench(t, stdout, stderr, "run", study, "--out", filepath.Join(t.TempDir(), "run"), "--journal-dir", jdir)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(cmd.Process.Pid) {
			_ = cmd.Wait()
			t.Fatalf("run ended (%v) before its measurement: %v", cmd.ProcessState, stderr)
		}
		journals, _ := filepath.Glob(filepath.Join(jdir, "*.journal"))
		b, _ := os.ReadFile(sockFlow)
		if len(journals) == 1 && strings.TrimSpace(string(b)) == "32768" && len(iperfChildren(cmd.Process.Pid)) > 0 {
			return cmd, strings.TrimSuffix(filepath.Base(journals[0]), ".journal")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run never reached its measurement: %v", stderr)
	return nil, ""
}

// runLeftovers lists what runs keep in the journal directory: journals
// and run state directories (state/<run>); the state/ directory that
// holds them is shared by all runs and not one's leftover.
func runLeftovers(jdir string) []string {
	var out []string
	ents, _ := os.ReadDir(jdir)
	for _, e := range ents {
		if e.Name() == "state" && e.IsDir() {
			runs, _ := os.ReadDir(filepath.Join(jdir, "state"))
			for _, r := range runs {
				out = append(out, "state/"+r.Name())
			}
			continue
		}
		out = append(out, e.Name())
	}
	return out
}

// iperfChildren lists iperf3 processes whose parent is pid.
func iperfChildren(pid int) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		if !strings.Contains(s, "(iperf3)") {
			continue
		}
		var self, ppid int
		var comm, state string
		if _, err := fmt.Sscanf(s, "%d %s %s %d", &self, &comm, &state, &ppid); err == nil && ppid == pid {
			out = append(out, self)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie is gone for our purposes: it holds no namespace.
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func TestInterruptTearsDown(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	jdir := t.TempDir()
	var errb syncBuffer
	cmd, id := startLongRunOut(t, jdir, &errb, &errb)
	kids := iperfChildren(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 30*time.Second)
	checkTornDown(t, cmd, syscall.SIGINT, before, id, jdir, kids)
	// It says it was stopped, and how to go on: the run recorded its
	// environment, so it can be resumed.
	for _, want := range []string{"cnibench: stopped on interrupt: ", "; continue it with: cnibench run --resume "} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("an interrupted run does not say %q:\n%s", want, errb.String())
		}
	}
}

func TestKill9ThenCleanup(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before := snapshot(t)
	iperfBefore := allIperf()
	jdir := t.TempDir()
	cmd, id := startLongRun(t, jdir)
	kids := iperfChildren(cmd.Process.Pid)
	// The run's temporary directory (TMPDIR of its helpers) must go with
	// the rest.
	tmp := filepath.Join(os.TempDir(), "cnibench-"+id)
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("run's temporary directory: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The crash leaves state behind: that is what cleanup is for.
	if snapshot(t).sockFlow == before.sockFlow {
		t.Fatal("test did not observe the run's change; cannot test recovery")
	}
	// No run starts while the dead run's journal waits for cleanup.
	study := writeStudy(t, fmt.Sprintf(tinyStudy, "flannel-vxlan", "rfs", "2s"))
	if r := cnibench(t, nil, "run", study, "--out", filepath.Join(t.TempDir(), "run"), "--journal-dir", jdir); r.code != 2 ||
		!strings.Contains(r.stderr, id+".journal") || !strings.Contains(r.stderr, "cnibench cleanup --journal-dir "+jdir) {
		t.Errorf("run beside a stale journal: exit %d, want 2 naming %s.journal and cnibench cleanup --journal-dir %s:\n%s", r.code, id, jdir, r.stderr)
	}
	// Nor a run of another journal directory: it would journal the dead
	// run's values as old, and the two directories' cleanups would leave
	// the machine changed.
	if r := cnibench(t, nil, "run", study, "--out", filepath.Join(t.TempDir(), "run"), "--journal-dir", t.TempDir()); r.code != 2 ||
		!strings.Contains(r.stderr, id+".journal") || !strings.Contains(r.stderr, "cnibench cleanup --journal-dir "+jdir) {
		t.Errorf("run of another directory beside a stale journal: exit %d, want 2 naming %s.journal and cnibench cleanup --journal-dir %s:\n%s", r.code, id, jdir, r.stderr)
	}
	r := cnibench(t, nil, "cleanup", "--run", id, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("cleanup said:\n%s", r.stdout)
	assertUntouched(t, before, "cnb-"+id)
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run's temporary directory %s left after cleanup (%v)", tmp, err)
	}
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("journal left after cleanup: %v", ents)
	}
	for _, p := range kids {
		if alive(p) {
			t.Errorf("iperf3 pid %d survived cleanup", p)
		}
	}
	// Every process of the dead run has exited when cleanup returns:
	// servers too, not only the children the test saw.
	if left := newIperf(iperfBefore); len(left) > 0 {
		t.Errorf("iperf3 processes alive after cleanup returned: %v", left)
	}
	// A second cleanup finds nothing to do.
	if r := cnibench(t, nil, "cleanup", "--run", id, "--journal-dir", jdir); r.code != 0 || !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("second cleanup: exit %d: %s", r.code, r.stdout)
	}
}

// A study name that climbs out of the working directory is refused before
// the default run directory (results/NAME-TIMESTAMP) is made from it.
func TestPathTraversalNameWritesNothing(t *testing.T) {
	root := t.TempDir()
	cwd := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	jdir := t.TempDir()
	for _, name := range []string{"../../x", "../../../" + filepath.Base(root) + "/y", "a/b", ".."} {
		t.Run(name, func(t *testing.T) {
			before := snapshot(t)
			cmd := exec.Command(bin, "run", "rps-rfs", "--quick", "--journal-dir", jdir, "--set", "metadata.name="+name)
			cmd.Dir = cwd
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("got %v, want exit 2; stderr: %s", err, errb.String())
			}
			msg := strings.TrimSpace(errb.String())
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "metadata.name") {
				t.Errorf("want one line naming metadata.name, got %q", msg)
			}
			var made []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && p != root && p != filepath.Dir(cwd) && p != cwd {
					made = append(made, p)
				}
				return nil
			})
			if len(made) > 0 {
				t.Errorf("created %v", made)
			}
			if ents := runLeftovers(jdir); len(ents) != 0 {
				t.Errorf("journal written: %v", ents)
			}
			assertUntouched(t, before, "")
		})
	}
}

// startCnibench starts the binary with args, its output going to stdout
// and stderr, and kills it when the test ends if it is still running.
func startCnibench(t *testing.T, stdout, stderr io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return
		}
		// A test that failed before its run ended: stop it so that it
		// tears down (its journal is in the test's own directory, which
		// goes with the test, so a kill would leave the host changed for
		// good); kill it only if it does not end within a minute.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd
}

// --dry-run checks the study and this machine, says what the run would do
// and for how long, and changes nothing: no run directory, no journal,
// the host as it was. A problem is found as a run finds it (exit 2).
func TestDryRun(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	before := snapshot(t)
	r := cnibench(t, nil, "run", "rps-rfs", "--quick", "--set", "replicas=[1,4]", "--dry-run", "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"study rps-rfs (builtin:rps-rfs, profile quick): 10 cells", "repetitions: adaptive, 3 to 10 trials per cell",
		"machine time in trials: 2m at 3 trials per cell to 6m40s at 10", "preflight (local engine): passed",
		"tunings (each set for its own trials only, and put back after each):\n  baseline: nothing: the machine as found\n  rps: RPS to CPUs all",
		"to run it: cnibench run rps-rfs --quick --set 'replicas=[1,4]' --out " + out + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a dry run created %s", out)
	}
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("a dry run wrote the journal: %v", ents)
	}
	assertUntouched(t, before, "")
	// A budget that cannot pay for the minimum is said where the user
	// checks the run, as the run would say it at its start.
	const short = "warning: the budget of 1m30s is too small for the study's minimum of 3 trials in each of its 10 cells"
	if strings.Contains(r.stdout, "warning: the budget") {
		t.Errorf("a dry run without a budget warns of one:\n%s", r.stdout)
	}
	r = cnibench(t, nil, "run", "rps-rfs", "--quick", "--set", "replicas=[1,4]", "--budget", "1m30s", "--dry-run", "--journal-dir", jdir)
	if r.code != 0 || !strings.Contains(r.stdout, short) {
		t.Errorf("a dry run with a budget below the minimum's cost: exit %d, no %q:\n%s%s", r.code, short, r.stdout, r.stderr)
	}
	r = cnibench(t, nil, "run", "rps-rfs", "--quick", "--dry-run", "--set", `nodes={server: {cpus: "1000"}}`, "--journal-dir", jdir)
	if r.code != 2 || !strings.Contains(r.stderr, "spec.nodes.server.cpus: CPU 1000 does not exist") {
		t.Errorf("a dry run of a study this machine cannot run: exit %d\n%s", r.code, r.stderr)
	}
	// Refused, it still says what the study is and that it would not run.
	for _, want := range []string{"study rps-rfs (builtin:rps-rfs, profile quick): 10 cells", "preflight (local engine): refused"} {
		if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "to run it:") {
			t.Errorf("a refused dry run's output lacks %q or offers to run it:\n%s", want, r.stdout)
		}
	}
	if r := cnibench(t, nil, "run", "--resume", out, "--dry-run", "--journal-dir", jdir); r.code != 2 {
		t.Errorf("--dry-run with --resume: exit %d, want 2", r.code)
	}
	// An --out the run would refuse is refused by the dry run too.
	taken := t.TempDir()
	if err := os.WriteFile(filepath.Join(taken, "summary.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cnibench(t, nil, "run", "rps-rfs", "--quick", "--dry-run", "--out", taken, "--journal-dir", jdir); r.code != 2 || !strings.Contains(r.stderr, "exists and is not empty") {
		t.Errorf("a dry run into a used --out: exit %d\n%s", r.code, r.stderr)
	}
}
