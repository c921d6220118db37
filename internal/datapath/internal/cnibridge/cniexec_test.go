package cnibridge_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnibench/cnibench/internal/cniexec"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/cnibridge"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestRealBridge runs Debian's bridge, host-local and loopback plugins on
// a node with cni0, as flannel-cni's delegate: the pod gets the lease's
// first address and lo up, the host veth is a port of cni0, host-local
// keeps the lease in the node's state directory; DEL removes the veth, the
// lease and the cache, and a second DEL succeeds.
func TestRealBridge(t *testing.T) {
	kerneltest.RequireRoot(t)
	if err := probe.Require(probe.Veth, probe.Bridge); err != nil {
		t.Skipf("skipped: %v", err)
	}
	kerneltest.RequireCNIPlugins(t, "bridge", "host-local", "loopback")
	run := kerneltest.RunID()
	node := datapath.Node{Name: "server", Netns: "cnb-" + run + "-node", UnderlayMTU: 1500}
	pod := cniexec.Pod{ID: "cnb-" + run + "-srv0", Netns: "cnb-" + run + "-srv0", IfName: datapath.PodEth}
	for _, ns := range []string{node.Netns, pod.Netns} {
		if err := netns.Add(ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := netns.Delete(ns); err != nil {
				t.Error(err)
			}
		})
	}
	_, lease, _ := net.ParseCIDR("10.244.0.0/24")
	h, err := netns.Handle(node.Netns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := cnibridge.SetupBridge(h, node, lease, 1450); err != nil {
		t.Fatal(err)
	}
	conf, err := cnibridge.FlannelCNIConfig(lease, 1450)
	if err != nil {
		t.Fatal(err)
	}
	n := &cniexec.Node{Name: node.Name, Netns: node.Netns, Dir: filepath.Join(t.TempDir(), "server"), Path: probe.CNIPath()}
	ctx := context.Background()
	res, err := n.Add(ctx, pod, conf)
	if err != nil {
		t.Fatal(err)
	}
	if res.IP.String() != "10.244.0.2" {
		t.Errorf("pod address %s, want 10.244.0.2 (the lease's first after the gateway)", res.IP)
	}
	veth, err := h.LinkByName(res.HostVeth)
	if err != nil {
		t.Fatalf("host veth %q: %v", res.HostVeth, err)
	}
	br, _ := h.LinkByName(cnibridge.Bridge)
	if veth.Attrs().MasterIndex != br.Attrs().Index || veth.Attrs().MTU != 1450 {
		t.Errorf("host veth %s: master %d (cni0 is %d), MTU %d", res.HostVeth, veth.Attrs().MasterIndex, br.Attrs().Index, veth.Attrs().MTU)
	}
	leaseFile := filepath.Join(n.Dir, cniexec.NetworksDir, cnibridge.FlannelNetworkName, "10.244.0.2")
	if _, err := os.Stat(leaseFile); err != nil {
		t.Errorf("host-local lease: %v", err)
	}
	ph, err := netns.Handle(pod.Netns)
	if err != nil {
		t.Fatal(err)
	}
	defer ph.Close()
	if lo, err := ph.LinkByName("lo"); err != nil || lo.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("pod lo not up (the loopback plugin's job): %v", err)
	}
	if err := n.Del(ctx, pod, conf); err != nil {
		t.Fatal(err)
	}
	if _, err := h.LinkByName(res.HostVeth); err == nil {
		t.Errorf("host veth %s left after DEL", res.HostVeth)
	}
	if _, err := os.Stat(leaseFile); !os.IsNotExist(err) {
		t.Errorf("lease %s left after DEL: %v", leaseFile, err)
	}
	if cache, _ := filepath.Glob(filepath.Join(n.Dir, cniexec.CacheDir, "results", "*")); len(cache) != 0 {
		t.Errorf("cached results left after DEL: %v", cache)
	}
	if err := n.Del(ctx, pod, conf); err != nil {
		t.Errorf("second DEL: %v", err)
	}
}
