package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/tune"
)

// A process of another namespace that carries a pod's mark makes the
// agent refuse the pod's knobs, naming both PIDs, and write nothing into
// either namespace; once it is gone the write reaches the pod's
// namespace, entered through the descriptor the agent checked.
func TestKernelAgentRefusesSpoofedPod(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create network namespaces")
	}
	podNS, spoofNS := scratchNS(t, "pod"), scratchNS(t, "spoof")
	const somaxconn = "/proc/sys/net/core/somaxconn"
	before := map[string]string{}
	for _, ns := range []string{podNS, spoofNS} {
		v, err := (tune.LocalFS{}).Read(ns, tune.FSProc, somaxconn)
		if err != nil { // per namespace since Linux 2.6: no missing feature
			t.Fatalf("net.core.somaxconn in %s: %v", ns, err)
		}
		before[ns] = strings.TrimSpace(v)
	}
	proc := t.TempDir()
	mark := "HOME=/\x00" + PodEnv + "=ns/srv-0\x00"
	procNetns(t, proc, "40", spoofNS)
	procFile(t, proc, "40/environ", mark)
	procNetns(t, proc, "4242", podNS)
	procFile(t, proc, "4242/environ", mark)

	c, wait := session(t, Config{Run: "spoof", ProcRoot: proc, JournalDir: filepath.Join(t.TempDir(), "node")})
	pod := PodNetns("ns", "srv-0")
	err := c.Write(pod, tune.FSProc, somaxconn, "777")
	if err == nil || !strings.Contains(err.Error(), "PID 40 ") || !strings.Contains(err.Error(), "PID 4242 ") {
		t.Errorf("write with a spoofer about: %v; want a refusal naming PIDs 40 and 4242", err)
	}
	for ns, v := range before {
		if now, _ := (tune.LocalFS{}).Read(ns, tune.FSProc, somaxconn); strings.TrimSpace(now) != v {
			t.Errorf("%s's somaxconn = %q after a refused write, want %q", ns, now, v)
		}
	}
	os.WriteFile(filepath.Join(proc, "40/environ"), []byte("HOME=/\x00"), 0o644) // the spoofer is gone
	if err := c.Write(pod, tune.FSProc, somaxconn, "777"); err != nil {
		t.Fatal(err)
	}
	if now, _ := (tune.LocalFS{}).Read(podNS, tune.FSProc, somaxconn); strings.TrimSpace(now) != "777" {
		t.Errorf("pod's somaxconn = %q, want 777", now)
	}
	if now, _ := (tune.LocalFS{}).Read(spoofNS, tune.FSProc, somaxconn); strings.TrimSpace(now) != before[spoofNS] {
		t.Errorf("spoofer's somaxconn = %q, want %q", now, before[spoofNS])
	}
	c.Close()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if now, _ := (tune.LocalFS{}).Read(podNS, tune.FSProc, somaxconn); strings.TrimSpace(now) != before[podNS] {
		t.Errorf("pod's somaxconn = %q after the session, want it reverted to %q", now, before[podNS])
	}
}
