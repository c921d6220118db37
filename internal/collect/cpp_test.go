package collect

import (
	"context"
	"slices"
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

// ifaceKernel records the devices its CPU cost per packet counts, and
// the processes whose samples it counts.
type ifaceKernel struct {
	loggedKernel
	ifaces []netns.Iface
	procs  []string
}

func (k *ifaceKernel) CPP(ifaces []netns.Iface, procs []string) (engine.MetricWindow, error) {
	k.ifaces, k.procs = ifaces, procs
	return k.loggedKernel.CPP(ifaces, procs)
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

// perf samples the background pairs' processes and softirqs with the
// measured pairs' (every iperf3 counts): divided by the measured servers'
// packets alone, their work raised every cost per packet. The background
// servers' devices are counted too, a shared one still once, and the run
// notes what the cost is per packet of.
func TestCPPCountsTheBackgroundServers(t *testing.T) {
	var log []string
	k := &ifaceKernel{loggedKernel: loggedKernel{log: &log}}
	kernel := func(engine.Node) engine.Kernel { return k }
	s, err := NewSet(study.Workload{CPP: true}, Trial{Cluster: fakeCluster{}, Kernel: kernel, SharedKernel: true,
		Servers:    []engine.Pod{fakePod{ns: "srv-0"}, fakePod{ns: "srv-1"}},
		Background: []engine.Pod{fakePod{ns: "srv-2"}, fakePod{ns: "srv-3"}, fakePod{ns: "srv-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ifc := range k.ifaces {
		got = append(got, ifc.Netns)
	}
	if want := []string{"srv-0", "srv-1", "srv-2", "srv-3"}; !slices.Equal(got, want) {
		t.Errorf("counted the devices of %v, want %v", got, want)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := s.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if note := strings.Join(r.Notes, "; "); !strings.Contains(note, "measured and the background traffic together") {
		t.Errorf("notes %q do not say the cost is of the background traffic too", note)
	}

	// Without background: the measured servers' alone, and no note.
	log = nil
	s, err = NewSet(study.Workload{CPP: true}, Trial{Cluster: fakeCluster{}, Kernel: kernel, SharedKernel: true,
		Servers: []engine.Pod{fakePod{ns: "srv-0"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(k.ifaces) != 1 {
		t.Errorf("counted %v for one measured server, want its device", k.ifaces)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Stop(context.Background()); err != nil || len(r.Notes) != 0 {
		t.Errorf("without background: notes %q (%v), want none", r.Notes, err)
	}
}

// flannel-udp's flanneld carries every packet in user space: the
// collector hands the datapath's per-packet processes to the node's
// kernel, whose perf counts their samples, and the run notes it once.
func TestCPPCountsTheDatapathProcesses(t *testing.T) {
	var log []string
	k := &ifaceKernel{loggedKernel: loggedKernel{log: &log}}
	kernel := func(engine.Node) engine.Kernel { return k }
	for _, procs := range [][]string{{"flanneld"}, nil} {
		s, err := NewSet(study.Workload{CPP: true}, Trial{Cluster: fakeCluster{}, Kernel: kernel, SharedKernel: true,
			Servers: []engine.Pod{fakePod{ns: "srv-0"}}, PacketProcesses: procs})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(k.procs, procs) {
			t.Errorf("the kernel counts the samples of %q, want %q", k.procs, procs)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		r, err := s.Stop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		note := strings.Join(r.Notes, "; ")
		if said := strings.Contains(note, "(flanneld) count in the cost per packet"); said != (procs != nil) {
			t.Errorf("processes %q: notes %q", procs, note)
		}
	}
}
