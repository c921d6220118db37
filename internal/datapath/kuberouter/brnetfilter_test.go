package kuberouter

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// TestSetupNodeTurnsOnBridgeNetfilter: kube-router sets
// net.bridge.bridge-nf-call-iptables=1 once kube-bridge is up, so SetupNode
// must leave it 1 in the node's namespace even where it was 0, and both
// datapaths ask for br_netfilter.
func TestSetupNodeTurnsOnBridgeNetfilter(t *testing.T) {
	for _, d := range []datapath.Datapath{New(), NewBIRD()} {
		if !slices.Contains(d.Features(), probe.BrNetfilter) {
			t.Errorf("%T needs %v, without %s", d, d.Features(), probe.BrNetfilter)
		}
	}
	kerneltest.RequireKernel(t, probe.Bridge, probe.BrNetfilter)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "node")
	const key = "net/bridge/bridge-nf-call-iptables"
	if err := wire.Sysctl(ns, key, "0"); err != nil {
		t.Fatal(err)
	}
	n := datapath.Node{Name: "node", Netns: ns, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, 1), UnderlayMTU: 1500}
	if err := New().SetupNode(n); err != nil {
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
		t.Errorf("after SetupNode the node's %s is %s, want 1 as kube-router sets it", key, v)
	}
}
