package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// TestErrorsNamePodKnobAndNode: the agent resolves a pod to the path of
// its namespace before it touches a knob, but what it answers names the
// pod the controller asked about, the knob, and the node the agent is on.
func TestErrorsNamePodKnobAndNode(t *testing.T) {
	fs := testNode()
	fs.gone["podns1"] = true // the pod's process exited: its namespace path is gone
	knob := "class/net/eth0/queues/rx-0/rps_cpus"
	cfg := Config{Run: "e1", Node: "w1", FS: fs, Pods: fakePods{"ns/srv-0": "podns1"}, JournalDir: t.TempDir(),
		IfStats: func(ifc netns.Iface) (ifstats.Counters, error) {
			return ifstats.Counters{}, fmt.Errorf("link %s in %s: no such device", ifc.Name, ifc.Netns)
		}}
	c, wait := session(t, cfg)
	defer func() { c.Close(); wait() }()
	pod := PodNetns("ns", "srv-0")

	err := c.Write(pod, "sysfs", knob, "3")
	for _, want := range []string{"node w1", "pod ns/srv-0", "read the old value of " + knob} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("write to a gone pod: %v; want it to say %q", err, want)
		}
	}
	if !errors.Is(err, tune.ErrGone) {
		t.Errorf("write to a gone pod: %v; want ErrGone", err)
	}
	if _, err := c.Read(pod, "sysfs", knob); err == nil || !strings.Contains(err.Error(), "pod ns/srv-0") {
		t.Errorf("read in a gone pod: %v; want it to name the pod", err)
	}
	_, err = c.IfStats([]netns.Iface{{Netns: pod, Name: "eth0"}})
	if err == nil || !strings.Contains(err.Error(), "eth0 of pod ns/srv-0") || !strings.Contains(err.Error(), "node w1") {
		t.Errorf("counters in a gone pod: %v; want the device, the pod and the node named", err)
	}
	_, err = c.IfStats([]netns.Iface{{Name: "eth9"}})
	if err == nil || !strings.Contains(err.Error(), "eth9 of the node") {
		t.Errorf("counters of a node device: %v; want the device and the node named", err)
	}
}

// TestRevertErrorNamesWhere: a value left alone at the session's end is
// reported with where it is, in plain words.
func TestRevertErrorNamesWhere(t *testing.T) {
	fs := testNode()
	p := "class/net/eth1/queues/rx-0/rps_cpus"
	srv := NewServer(Config{Run: "e2", Node: "w1", FS: fs, Pods: fakePods{}, JournalDir: t.TempDir()})
	if err := srv.write("", "sysfs", p, "3"); err != nil {
		t.Fatal(err)
	}
	fs.vals[key("", "sysfs", p)] = "7" // an operator's change
	_, err := srv.Revert()
	if err == nil || strings.Contains(err.Error(), "  ") || !strings.Contains(err.Error(), "revert "+p+" of the node") {
		t.Errorf("Revert = %v; want %q, single-spaced", err, "revert "+p+" of the node")
	}
	srv.closeJournal()
}

// The agent answers in the name of its node: CNIBENCH_NODE, which the
// DaemonSet sets from the pod's spec.nodeName and `agent serve`
// inherits through exec.
func TestServerNodeFromEnv(t *testing.T) {
	t.Setenv(NodeEnv, "kind-worker2")
	if got := NewServer(Config{FS: newMemFS()}).cfg.Node; got != "kind-worker2" {
		t.Errorf("node = %q, want kind-worker2", got)
	}
	e := &RemoteError{Op: OpWrite, Node: "w1", Msg: "boom"}
	if got := e.Error(); got != "agent on node w1: write: boom" {
		t.Errorf("RemoteError = %q", got)
	}
}
