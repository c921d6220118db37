package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// scratchNS makes a throw-away named namespace.
func scratchNS(t *testing.T, role string) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := "cnb-t" + hex.EncodeToString(b) + "-" + role
	if err := netns.Add(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netns.Delete(name); err != nil {
			t.Error(err)
		}
	})
	return name
}

func netnsEntries(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(netns.Dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// procFile writes PROC/REL, making its directory.
func procFile(t *testing.T, proc, rel, data string) {
	t.Helper()
	p := filepath.Join(proc, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// procNetns makes PROC/PID/ns/net a link to a namespace, as /proc shows
// a process's namespace.
func procNetns(t *testing.T, proc, pid, ns string) {
	t.Helper()
	dir := filepath.Join(proc, pid, "ns")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(netns.Path(ns), filepath.Join(dir, "net")); err != nil {
		t.Fatal(err)
	}
}

// The agent on a node that is not in the init namespace: /proc/sys goes
// to the init namespace, pod knobs and counters to the pod's namespace,
// both entered by path, and nothing is added under /var/run/netns (the
// agent used to leave a "cnbinit" link there, and "cnbpod-*" links).
// The node's /proc is a stand-in whose PID 1 lives in a throw-away
// "init" namespace and whose PID 4242 is a pod's process.
func TestKernelAgentEntersByPathLeavesNoLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create network namespaces")
	}
	initNS, podNS := scratchNS(t, "init"), scratchNS(t, "pod")
	const somaxconn = "/proc/sys/net/core/somaxconn"
	// Per namespace since Linux 2.6 (net->core.sysctl_somaxconn): a failed
	// write is no missing feature.
	if err := netns.Do(initNS, func() error { return os.WriteFile(somaxconn, []byte("1234"), 0) }); err != nil {
		t.Fatalf("net.core.somaxconn in %s: %v", initNS, err)
	}
	hostMax, err := os.ReadFile(somaxconn)
	if err != nil {
		t.Fatal(err)
	}
	h, err := netns.Handle(podNS)
	if err != nil {
		t.Fatal(err)
	}
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "eth0"
	err = h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "cnbpeer0"})
	h.Close()
	if err != nil {
		t.Fatalf("veth in the pod namespace: %v", err)
	}
	rps := "class/net/eth0/queues/rx-0/rps_cpus"
	// Whether the kernel has RPS, from the host's lo (every device has
	// rx-0/rps_cpus with CONFIG_RPS), not from the code under test.
	if _, err := os.Stat("/sys/class/net/lo/queues/rx-0/rps_cpus"); errors.Is(err, os.ErrNotExist) {
		t.Skipf("skipped: no rps_cpus on the host's lo (kernel without CONFIG_RPS): %v", err)
	}
	if _, err := (tune.LocalFS{}).Read(podNS, tune.FSSysfs, rps); err != nil {
		t.Fatalf("the pod's %s: %v", rps, err)
	}

	proc := t.TempDir()
	procNetns(t, proc, "1", initNS)
	procNetns(t, proc, "4242", podNS)
	procFile(t, proc, "4242/environ", "HOME=/\x00"+PodEnv+"=ns/srv-0\x00")
	before := netnsEntries(t)

	// somaxconn is per namespace, which is what this test needs to tell
	// the init namespace from the agent's (a network sysctl: writable).
	cfg := Config{Run: "r1", ProcRoot: proc, JournalDir: filepath.Join(t.TempDir(), "node")}
	c, wait := session(t, cfg)
	if v, err := c.Read("", tune.FSProc, somaxconn); err != nil || v != "1234" {
		t.Errorf("agent reads %s = %q, %v; want the init namespace's 1234", somaxconn, v, err)
	}
	if err := c.Write("", tune.FSProc, somaxconn, "1235"); err != nil {
		t.Error(err)
	}
	pod := PodNetns("ns", "srv-0")
	if err := c.Write(pod, tune.FSSysfs, rps, "1"); err != nil {
		t.Error(err)
	}
	if v, err := (tune.LocalFS{}).Read(podNS, tune.FSSysfs, rps); err != nil || strings.Trim(v, "0,") != "1" {
		t.Errorf("pod's rps_cpus = %q, %v after the agent wrote 1", v, err)
	}
	if _, err := c.IfStats([]netns.Iface{{Netns: pod, Name: "eth0"}}); err != nil {
		t.Errorf("pod counters: %v", err)
	}
	if now, _ := os.ReadFile(somaxconn); string(now) != string(hostMax) {
		t.Errorf("the host's %s changed: %q -> %q", somaxconn, hostMax, now)
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	var initMax []byte
	_ = netns.Do(initNS, func() (err error) { initMax, err = os.ReadFile(somaxconn); return err })
	if strings.TrimSpace(string(initMax)) != "1234" {
		t.Errorf("init namespace's %s = %q after the session, want it reverted to 1234", somaxconn, initMax)
	}
	if after := netnsEntries(t); !slices.Equal(before, after) {
		t.Errorf("%s changed during the session:\nbefore %v\nafter  %v", netns.Dir, before, after)
	}
}
