package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// adviseState is what `cnibench advise` must not change: sysctls it
// reads, the NICs' links, steering files and offloads.
func adviseState(t *testing.T) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, p := range []string{sockFlow, "/proc/sys/net/core/busy_poll", "/proc/sys/net/core/busy_read",
		"/proc/sys/net/netfilter/nf_conntrack_max"} {
		if b, err := os.ReadFile(p); err == nil {
			s[p] = strings.TrimSpace(string(b))
		}
	}
	nics, _ := filepath.Glob("/sys/class/net/*/device")
	for _, d := range nics {
		dev := filepath.Base(filepath.Dir(d))
		out, _ := exec.Command("ip", "-o", "link", "show", "dev", dev).Output()
		s["ip link "+dev] = string(out)
		out, _ = exec.Command("ethtool", "-k", dev).Output()
		s["ethtool -k "+dev] = string(out)
		files, _ := filepath.Glob("/sys/class/net/" + dev + "/queues/rx-*/rps_*")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			s[f] = strings.TrimSpace(string(b))
		}
	}
	return s
}

func TestAdviseWritesPagesAndChangesNothing(t *testing.T) {
	before := adviseState(t)
	out := filepath.Join(t.TempDir(), "advice")
	r := cnibench(t, nil, "advise", "--out", out)
	if r.code != 0 {
		t.Fatalf("advise exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"advice.md", "advice.html", "advice.json", "inspection.json"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(r.stdout, "## What was found") || !strings.Contains(r.stdout, "## Rules that do not apply") {
		t.Errorf("stdout is not the Markdown page:\n%s", r.stdout)
	}
	var rep struct {
		Candidates []struct{ Measured, Verdict string } `json:"candidates"`
		Inspection struct {
			CPUs int `json:"cpus"`
		} `json:"inspection"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "advice.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Inspection.CPUs < 1 {
		t.Errorf("inspection found no CPU: %s", b)
	}
	for _, c := range rep.Candidates {
		if c.Measured != "not measured" || c.Verdict != "not proven: run with --prove" {
			t.Errorf("candidate claims a measurement: %+v", c)
		}
	}
	after := adviseState(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q -> %q", k, v, after[k])
		}
	}
}

func TestAdviseBadInputExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"advise", "--rule", "nope"},
		{"advise", "--prove", "--budget", "0s"},
		{"advise", "--prove", "--budget", "-5m"},
		{"advise", "--budget", "5m"},
		{"advise", "--prove", "--study", "no-such-study", "--rule", "rfs"},
		{"advise", "--prove", "--engine", "kube"},
		{"advise", "--engine", "kube"},
		{"advise", "--engine", "vm"},
	} {
		out := filepath.Join(t.TempDir(), "advice")
		r := cnibench(t, nil, append(args, "--out", out)...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want 2 and one line", args, r.code, r.stderr, r.stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v wrote %s", args, out)
		}
	}
	r := cnibench(t, nil, "advise", "--rule", "nope")
	if !strings.Contains(r.stderr, `unknown rule "nope"`) || !strings.Contains(r.stderr, "rfs") {
		t.Errorf("stderr %q should name the rule and the known ones", r.stderr)
	}
}

// provedAdvice is what TestAdviseProve reads of advice.json.
type provedAdvice struct {
	Candidates []struct {
		Rule     string `json:"rule"`
		Measured string `json:"measured"`
		Verdict  string `json:"verdict"`
		Why      string `json:"verdict_why"`
		Proof    *struct {
			RunDir string `json:"run_dir"`
			Cells  []struct {
				Replicas int      `json:"replicas"`
				Decision string   `json:"decision"`
				Low      *float64 `json:"low"`
			} `json:"cells"`
			Rerun *struct {
				Args []string `json:"args"`
			} `json:"rerun"`
		} `json:"proof"`
	} `json:"candidates"`
}

// TestAdviseProve measures this machine's candidates with short A/B runs:
// each provable candidate gets a run directory, an interval per cell and
// a verdict; nothing of the host is left changed.
func TestAdviseProve(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before, hostBefore := adviseState(t), snapshot(t)
	fire, why := rfsApplies(t)
	out := filepath.Join(t.TempDir(), "advice")
	jdir := t.TempDir()
	r := cnibench(t, nil, "advise", "--prove", "--rule", "rfs", "--budget", "90s", "--set", "replicas=[1]", "--out", out, "--journal-dir", jdir)
	if r.code != 0 {
		t.Fatalf("advise --prove exit %d: %s", r.code, r.stderr)
	}
	var rep provedAdvice
	b, _ := os.ReadFile(filepath.Join(out, "advice.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Candidates) == 0 {
		if fire {
			t.Fatalf("no rfs candidate, but the rule's condition holds: %s", why)
		}
		t.Skipf("skipped: the rfs rule does not apply here: %s", why)
	}
	c := rep.Candidates[0]
	switch {
	case c.Proof == nil || len(c.Proof.Cells) == 0:
		t.Fatalf("no A/B cells: %+v", c)
	case c.Verdict != "accepted" && c.Verdict != "rejected" && c.Verdict != "undecided":
		t.Errorf("verdict %q", c.Verdict)
	case c.Why == "":
		t.Errorf("verdict %q without the cells behind it", c.Verdict)
	case !strings.Contains(c.Measured, "rfs-underlay/baseline") || !strings.Contains(c.Measured, "["):
		t.Errorf("measured effect without its interval: %q", c.Measured)
	}
	if _, err := os.Stat(filepath.Join(c.Proof.RunDir, "report.html")); err != nil {
		t.Errorf("A/B run report: %v", err)
	}
	// The A/B run records the command that proves its candidate alone,
	// which `report` and `compare` show.
	var env struct {
		Origin *struct{ Command []string } `json:"origin"`
	}
	if b, err := os.ReadFile(filepath.Join(c.Proof.RunDir, "env.json")); err != nil || json.Unmarshal(b, &env) != nil || env.Origin == nil ||
		strings.Join(env.Origin.Command, " ") != "cnibench advise --prove --rule rfs --set replicas=[1] --budget 1m30s" {
		t.Errorf("A/B run's origin %+v (%v)", env.Origin, err)
	}
	// --set shaped the A/B: one pod pair only.
	for _, pc := range c.Proof.Cells {
		if pc.Replicas != 1 {
			t.Errorf("a cell at %d pairs; --set replicas=[1] was not applied", pc.Replicas)
		}
	}
	// An undecided A/B says how to decide it, the user's --set kept.
	if c.Verdict == "undecided" && c.Proof.Rerun != nil {
		if a := strings.Join(c.Proof.Rerun.Args, " "); !strings.Contains(a, "--set replicas=[1] --set trials.max=") {
			t.Errorf("rerun %q lacks the user's --set or the trial maximum", a)
		}
		if md, _ := os.ReadFile(filepath.Join(out, "advice.md")); !strings.Contains(string(md), "**To decide:**") {
			t.Error("advice.md lacks the To decide line of the undecided candidate")
		}
	}
	after := adviseState(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q -> %q", k, v, after[k])
		}
	}
	assertUntouched(t, hostBefore, "")
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left after advise --prove: %v", ents)
	}
}

// TestAdviseProveKill9 kills advise --prove while the candidate (RFS) is
// applied; cleanup must put the global RFS table back and leave nothing.
func TestAdviseProveKill9(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	before, hostBefore := adviseState(t), snapshot(t)
	if before[sockFlow] == "32768" {
		t.Skip("skipped: rps_sock_flow_entries is already 32768; the test could not see the candidate applied")
	}
	fire, why := rfsApplies(t)
	jdir := t.TempDir()
	var errb syncBuffer
	cmd := startCnibench(t, &errb, &errb, "advise", "--prove", "--rule", "rfs", "--budget", "5m", "--out", filepath.Join(t.TempDir(), "a"), "--journal-dir", jdir)
	id := ""
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && id == ""; time.Sleep(100 * time.Millisecond) {
		if !alive(cmd.Process.Pid) {
			break
		}
		b, _ := os.ReadFile(sockFlow)
		journals, _ := filepath.Glob(filepath.Join(jdir, "*.journal"))
		if strings.TrimSpace(string(b)) == "32768" && len(journals) == 1 {
			id = strings.TrimSuffix(filepath.Base(journals[0]), ".journal")
		}
	}
	if id == "" {
		_ = cmd.Wait()
		if !fire {
			t.Skipf("skipped: the rfs rule does not apply here: %s", why)
		}
		t.Fatalf("the candidate was never applied (the rule's condition holds: %s): %s", why, errb.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if r := cnibench(t, nil, "cleanup", "--run", id, "--journal-dir", jdir); r.code != 0 {
		t.Fatalf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after := adviseState(t)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q -> %q", k, v, after[k])
		}
	}
	assertUntouched(t, hostBefore, "cnb-"+id)
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left after cleanup: %v", ents)
	}
}

// rfsApplies says, from /proc and /sys and not from advise, whether the
// rfs rule (internal/advise/rules/rfs.yaml) fires here: two or more
// online CPUs per receive queue of the default route's device, and RFS
// not on (rps_sock_flow_entries 0, or no queue with an rps_flow_cnt).
// Where that device is stacked (a bond, VLAN or bridge; Open vSwitch),
// advise reads its ports, and where it is neither a NIC nor a veth (a
// VPN's WireGuard or other tunnel), advise sees no underlay: this says
// it cannot tell (false).
func rfsApplies(t *testing.T) (bool, string) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		t.Fatal(err)
	}
	dev := ""
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			dev = f[0]
			break
		}
	}
	sys := "/sys/class/net/" + dev
	lower, _ := filepath.Glob(sys + "/lower_*")
	_, ovs := os.Stat("/sys/class/net/ovs-system")
	rx, _ := filepath.Glob(sys + "/queues/rx-*")
	switch {
	case dev == "":
		return false, "no IPv4 default route"
	case len(lower) > 0 || ovs == nil:
		return false, "cannot tell: " + dev + " is stacked (or Open vSwitch is in use)"
	case linkType(dev) != "device" && linkType(dev) != "veth":
		return false, "cannot tell: " + dev + " is a " + linkType(dev) + ", not a NIC or a veth"
	case len(rx) == 0:
		return false, dev + " has no rx queues in sysfs"
	}
	cpus := onlineCPUs(t)
	flowCnt := false
	for _, q := range rx {
		v, _ := os.ReadFile(q + "/rps_flow_cnt")
		n, _ := strconv.Atoi(strings.TrimSpace(string(v)))
		flowCnt = flowCnt || n > 0
	}
	v, _ := os.ReadFile(sockFlow)
	entries, _ := strconv.Atoi(strings.TrimSpace(string(v)))
	why := fmt.Sprintf("%d online CPUs over %d rx queues of %s, rps_sock_flow_entries %d, a queue with rps_flow_cnt: %v",
		cpus, len(rx), dev, entries, flowCnt)
	return cpus >= 2*len(rx) && !(entries > 0 && flowCnt), why
}

// linkType is the kind of link dev is ("device" for a NIC, "veth",
// "wireguard", ...), "" when it cannot be read.
func linkType(dev string) string {
	l, err := netlink.LinkByName(dev)
	if err != nil {
		return ""
	}
	return l.Type()
}

// onlineCPUs counts /sys/devices/system/cpu/online ("0-3,6").
func onlineCPUs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		if err2 != nil {
			z, err2 = a, nil
		}
		if err1 != nil || z < a {
			t.Fatalf("online CPUs %q", b)
		}
		n += z - a + 1
	}
	return n
}
