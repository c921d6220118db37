package weave

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// Without br_netfilter the datapath still runs, as weave-kube does after
// a warning (the local engine asks for it only of an entry with
// netfilter:): neither mode's Features names it, and the note says what
// is lost (wire.BridgeNetfilterOn writes the missing sysctl without
// error).
func TestRunsWithoutBridgeNetfilter(t *testing.T) {
	for _, mode := range []string{ModeBridge, ModeOVS} {
		if f := (&Datapath{Mode: mode}).Features(); slices.Contains(f, probe.BrNetfilter) {
			t.Errorf("weave in %s mode: features %v name %s: every study with it is refused where the module is not loaded", mode, f, probe.BrNetfilter)
		}
	}
	if !strings.Contains(New().WithoutBrNetfilter(), "Weave") {
		t.Errorf("note %q", New().WithoutBrNetfilter())
	}
}

// TestSetupNodeTurnsOnBridgeNetfilter: weave-kube's init.sh sets
// net.bridge.bridge-nf-call-iptables=1, so SetupNode leaves the sysctl 1
// in the node's namespace even where it was 0: else the weave bridge's
// pod-to-pod packets skip iptables.
func TestSetupNodeTurnsOnBridgeNetfilter(t *testing.T) {
	d := &Datapath{Mode: ModeBridge}
	kerneltest.RequireKernel(t, append(d.Features(), probe.BrNetfilter)...)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "node")
	const key = "net/bridge/bridge-nf-call-iptables"
	if err := wire.Sysctl(ns, key, "0"); err != nil {
		t.Fatal(err)
	}
	// The VXLAN device needs an underlay to sit on (a veth: kernels may
	// lack the dummy module).
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: wire.Attrs("eth1", 1500), PeerName: "eth1-peer"}); err != nil {
		t.Fatal(err)
	}
	n := datapath.Node{Name: "node", Netns: ns, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, 1), UnderlayMTU: 1500}
	if err := d.SetupNode(n); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := netns.Do(ns, func() (err error) {
		got, err = os.ReadFile("/proc/sys/" + key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(got)); v != "1" {
		t.Errorf("after SetupNode the node's %s is %s, want 1 as weave-kube sets it", key, v)
	}
}
