package kube

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/results"
)

// env.json of a kube run describes the server node, not the controller:
// Describe puts the node's CPU model and NUMA nodes there (it replaced
// only host, kernel and CPU count, so a laptop's CPU model and NUMA
// count were reported as the node's), and the tool versions the image's
// programs print in the agent pod (iperf3 3.12 there, whatever the
// controller has).
func TestDescribeServerNodeMachineAndImageTools(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1", Image: "registry.example/cnibench:t"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := agentFS()
	setCPUs(fs, 4, func(cpu int) (int, int) { return cpu / 2, cpu % 2 })
	fs.set("", "sysfs", "devices/system/node/node0/cpulist", "0-1")
	fs.set("", "sysfs", "devices/system/node/node1/cpulist", "2-3")
	fx := &fakeExec{fs: fs, dir: t.TempDir(), tool: func(pod string, argv []string) (string, int) {
		switch strings.Join(argv, " ") {
		case "iperf3 --version":
			return "iperf 3.12 (cJSON 1.7.15)\nLinux node-a 6.1.0 #1 SMP x86_64\n", 0
		case "ethtool --version":
			return "", 127 // not read: left out, and named
		}
		return "", 1
	}}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// What the runner no longer puts there, to show none of it stays.
	e := results.Env{Hostname: "laptop", Kernel: "6.16.0", CPUModel: "Laptop CPU", CPUs: 64, NUMANodes: 7,
		Tools: map[string]string{"go": "go1.25", "iperf3": "iperf 3.16"}}
	b := &Engine{cfg: cfg}
	b.Describe(engine.Run{ID: "r1", Study: stubStudy(t, "[{tool: iperf3}]")}, c, &e)

	host, _ := os.Hostname() // the fake agents run in this process
	if e.Hostname != host || e.CPUModel != envinfo.CPUModel("/proc/cpuinfo") || e.NUMANodes != 2 {
		t.Errorf("host %q, CPU model %q, %d NUMA nodes; want the agent's node's: %q, %q, 2",
			e.Hostname, e.CPUModel, e.NUMANodes, host, envinfo.CPUModel("/proc/cpuinfo"))
	}
	if e.Tools["iperf3"] != "iperf 3.12 (cJSON 1.7.15)" || e.Tools["go"] != "go1.25" {
		t.Errorf("tools %v: want the image's iperf3 3.12, and go kept", e.Tools)
	}
	if _, ok := e.Tools["ethtool"]; ok {
		t.Errorf("tools %v: an ethtool that did not run in the image has no version", e.Tools)
	}
	notes := strings.Join(e.Notes, "\n")
	if !strings.Contains(notes, "tool versions are those of image registry.example/cnibench:t") || !strings.Contains(notes, "not read there: ethtool") {
		t.Errorf("notes %q: want the image named, and ethtool as not read", e.Notes)
	}
}

// When the server node's agent cannot describe it, its host, kernel and
// CPUs are blank, with a note: they used to keep the controller's,
// which read as the node's.
func TestServerMachineBlankWhenInfoFails(t *testing.T) {
	e := results.Env{Hostname: "laptop", Kernel: "6.16.0", CPUModel: "Laptop CPU", CPUs: 64, NUMANodes: 1}
	serverMachine(&e, "w1", agent.NodeInfo{}, errors.New("session closed"))
	if e.Hostname != "" || e.Kernel != "" || e.CPUModel != "" || e.CPUs != 0 || e.NUMANodes != 0 {
		t.Errorf("env %+v: want the machine facts blank", e)
	}
	if len(e.Notes) != 1 || !strings.Contains(e.Notes[0], "server node w1's host, kernel") || !strings.Contains(e.Notes[0], "session closed") {
		t.Errorf("notes %q: want one saying why they are blank", e.Notes)
	}
	info := agent.NodeInfo{Hostname: "node-a", Kernel: "6.1.0", CPUs: 8, CPUModel: "Node CPU", NUMANodes: 2}
	e = results.Env{}
	serverMachine(&e, "w1", info, nil)
	if e.Hostname != "node-a" || e.Kernel != "6.1.0" || e.CPUs != 8 || e.CPUModel != "Node CPU" || e.NUMANodes != 2 || len(e.Notes) != 0 {
		t.Errorf("env %+v: want the node's facts, no note", e)
	}
}
