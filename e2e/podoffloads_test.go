package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPodOffloads runs a bridge datapath with GRO off on the pods' own
// devices: while the trial runs, `ethtool -k eth0` inside the server pod
// says so, env.json records it, and nothing is left afterwards.
func TestPodOffloads(t *testing.T) {
	requireRoot(t)
	requireTool(t, "iperf3")
	requireTool(t, "ethtool")
	before := snapshot(t)
	jdir := t.TempDir()
	out := filepath.Join(t.TempDir(), "run")
	study := writeStudy(t, `apiVersion: cnibench/v1alpha1
kind: Study
metadata:
  name: podgro
spec:
  datapaths:
    - {name: gro-off, type: bridge, podOffloads: {gro: "off"}}
  tunings: [baseline]
  workloads:
    - {name: tcp, tool: iperf3, length: 128K}
  replicas: [1]
  trials: 1
  duration: 12s
  warmup: 1s
`)
	var errb syncBuffer
	cmd := startCnibench(t, &errb, &errb, "run", study, "--out", out, "--journal-dir", jdir)
	seen := ""
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline) && seen == "" && alive(cmd.Process.Pid); time.Sleep(200 * time.Millisecond) {
		journals, _ := filepath.Glob(filepath.Join(jdir, "*.journal"))
		if len(journals) != 1 || len(iperfChildren(cmd.Process.Pid)) == 0 {
			continue
		}
		id := strings.TrimSuffix(filepath.Base(journals[0]), ".journal")
		o, err := exec.Command("ip", "netns", "exec", "cnb-"+id+"-srv0", "ethtool", "-k", "eth0").Output()
		if err == nil && bytes.Contains(o, []byte("generic-receive-offload:")) {
			seen = string(o)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(seen, "generic-receive-offload: off") {
		t.Errorf("the server pod's eth0 during the trial:\n%s", seen)
	}
	b, _ := os.ReadFile(filepath.Join(out, "env.json"))
	if !strings.Contains(string(b), "gro off on") || !strings.Contains(string(b), "pod devices") {
		t.Errorf("env.json does not record the pod offloads")
	}
	assertUntouched(t, before, "")
	if ents := runLeftovers(jdir); len(ents) != 0 {
		t.Errorf("left: %v", ents)
	}
}
