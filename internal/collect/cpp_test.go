package collect

import (
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// The local engine's perf samples every CPU of the machine both emulated
// nodes share: the description said "on the server node", true of a
// cluster node's agent alone.
func TestCPPDescriptionSaysWhichCPUs(t *testing.T) {
	d := cppEntry.Description
	for _, want := range []string{"every CPU", "local engine", "both emulated nodes", "server node's agent"} {
		if !strings.Contains(d, want) {
			t.Errorf("cpp description %q does not say %q", d, want)
		}
	}
}

// ifaceKernel records the devices its CPU cost per packet counts.
type ifaceKernel struct {
	loggedKernel
	ifaces []netns.Iface
}

func (k *ifaceKernel) CPP(ifaces []netns.Iface) (engine.MetricWindow, error) {
	k.ifaces = ifaces
	return k.loggedKernel.CPP(ifaces)
}

// Host-network server pods are the node's namespace and share its
// device: it was counted once per pod, so r pods divided every cost per
// packet by r.
func TestCPPCountsASharedDeviceOnce(t *testing.T) {
	var log []string
	k := &ifaceKernel{loggedKernel: loggedKernel{log: &log}}
	_, err := NewSet(study.Workload{CPP: true}, Trial{Cluster: fakeCluster{}, Kernel: func(engine.Node) engine.Kernel { return k },
		Servers: []engine.Pod{fakePod{}, fakePod{}, fakePod{}}, SharedKernel: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.ifaces) != 1 {
		t.Errorf("counted %v for three pods on one device, want it once", k.ifaces)
	}
}

// The devices collector's pods group takes the same devices: a shared
// one once (if_pods_* was r times the node's).
func TestDevicesCountASharedDeviceOnce(t *testing.T) {
	c, err := newDevices(Trial{Cluster: fakeCluster{}, Kernel: func(engine.Node) engine.Kernel { return &loggedKernel{} },
		Servers: []engine.Pod{fakePod{}, fakePod{}, fakePod{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range c.(*devices).groups {
		if g.name == "pods" && len(g.ifaces) != 1 {
			t.Errorf("pods group %v for three pods on one device, want it once", g.ifaces)
		}
	}
}
