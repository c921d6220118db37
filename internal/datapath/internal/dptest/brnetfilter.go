package dptest

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/wire"
)

// SetupNodeSetsBridgeNetfilter checks that d's SetupNode leaves
// net.bridge.bridge-nf-call-iptables 1 in the node's namespace even where
// it was 0, as the CNI d stands for (who) sets it on a Kubernetes node:
// else bridged pod-to-pod packets skip iptables. The node has an underlay
// eth1, a veth (a VXLAN device needs one to sit on; kernels may lack the
// dummy module). Skipped, saying why, without d's features or
// br_netfilter.
func SetupNodeSetsBridgeNetfilter(t *testing.T, d datapath.Datapath, who string) {
	t.Helper()
	kerneltest.RequireKernel(t, append(d.Features(), probe.BrNetfilter)...)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "node")
	const key = "net/bridge/bridge-nf-call-iptables"
	if err := wire.Sysctl(ns, key, "0"); err != nil {
		t.Fatal(err)
	}
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
		t.Errorf("after SetupNode the node's %s is %s, want 1 as %s sets it", key, v, who)
	}
}
