package offload_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/proc"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// TestSetOnNodeDevices turns VXLAN tunnel segmentation off on a
// flannel-vxlan node's underlay (the seed-004 "Flannel-off" case) and
// reads it back; a VXLAN device, where the feature is fixed, and an
// unknown feature are each refused with a reason.
func TestSetOnNodeDevices(t *testing.T) {
	workloadtest.RequireRoot(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	c, _ := workloadtest.Cluster(t, "flannel-vxlan", 1)
	n := c.Server()
	ctx := context.Background()
	dev := n.Underlay().Name
	show := func(d string) string {
		p, err := n.Start(ctx, []string{"ethtool", "-k", d})
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := p.Wait()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if !strings.Contains(show(dev), "tx-udp_tnl-segmentation: on") {
		t.Skipf("skipped: %s does not start with tx-udp_tnl-segmentation on:\n%s", dev, show(dev))
	}
	if err := offload.Set(ctx, n, dev, "tx-udp_tnl-segmentation", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show(dev), "tx-udp_tnl-segmentation: off") {
		t.Errorf("not off after Set:\n%s", show(dev))
	}
	tun, _ := n.Tunnel()
	err := offload.Set(ctx, n, tun.Name, "tx-udp_tnl-segmentation", true)
	if err == nil || !strings.Contains(err.Error(), "fixed on this device") {
		t.Errorf("fixed feature on %s: %v", tun.Name, err)
	}
	err = offload.Set(ctx, n, dev, "warp-drive", false)
	if err == nil || !strings.Contains(err.Error(), "not a feature ethtool knows") {
		t.Errorf("unknown feature: %v", err)
	}
}

// nsStarter runs programs in one network namespace.
type nsStarter string

func (ns nsStarter) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, string(ns), nil, argv)
}

// TestSetExplainsWhatDidNotChange: ethtool says "Could not change any
// device features" both for a fixed feature (a veth's loopback) and for
// one the kernel turns back (GSO on a veth whose scatter-gather is off);
// Set calls only the first fixed and says of the second that the kernel
// or driver kept it, quoting ethtool. TSO asked on with checksumming off
// makes ethtool exit 0 although no bit took: refused too.
func TestSetExplainsWhatDidNotChange(t *testing.T) {
	kerneltest.RequireRoot(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	ns := kerneltest.Netns(t, j, id, "o")
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "va"
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "vb"}); err != nil {
		t.Fatal(err)
	}
	ctx, n := context.Background(), nsStarter(ns)
	if err := offload.Set(ctx, n, "va", "sg", false); err != nil {
		t.Fatal(err)
	}
	err = offload.Set(ctx, n, "va", "gso", true)
	if err == nil {
		t.Skip("skipped: this kernel turns GSO on without scatter-gather")
	}
	if msg := err.Error(); strings.Contains(msg, "fixed") || !strings.Contains(msg, "kept it off") || !strings.Contains(msg, "tx-generic-segmentation: off [requested on]") {
		t.Errorf("gso without scatter-gather: %v; want that the kernel kept it off, quoting ethtool", err)
	}
	// ethtool exits 0 here: TSO's bits stay off without checksumming.
	if err := offload.Set(ctx, n, "va", "tx-checksumming", false); err != nil {
		t.Fatal(err)
	}
	err = offload.Set(ctx, n, "va", "tso", true)
	if err == nil || !strings.Contains(err.Error(), "tx-tcp-segmentation: off [requested on]") {
		t.Errorf("tso without checksumming: %v; want that the kernel kept it off", err)
	}
	if err := offload.Set(ctx, n, "va", "tx-checksumming", true); err != nil {
		t.Errorf("tx-checksumming back on (its fixed bits stay off): %v", err)
	}
	err = offload.Set(ctx, n, "va", "loopback", true)
	if err == nil || !strings.Contains(err.Error(), "fixed on this device (ethtool -k: loopback: off [fixed])") {
		t.Errorf("a veth's loopback: %v; want fixed", err)
	}
}

// TestTxChecksumOffAsFelix: the ethtool ioctl Felix uses turns a device's
// tx checksumming off and, with it, TSO (ethtool -k reads both off); a
// second call finds it off and changes nothing; a device the namespace
// lacks is an error naming it.
func TestTxChecksumOffAsFelix(t *testing.T) {
	kerneltest.RequireRoot(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed")
	}
	id := kerneltest.RunID()
	j := kerneltest.Journal(t, id)
	ns := kerneltest.Netns(t, j, id, "x")
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	attrs := netlink.NewLinkAttrs()
	attrs.Name = "va"
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "vb"}); err != nil {
		t.Fatal(err)
	}
	n := nsStarter(ns)
	before := offload.Features(n, "va")
	if !before["tx-checksumming"] || !before["tx-tcp-segmentation"] {
		t.Skipf("skipped: a veth here starts without tx checksumming or TSO: %v", before)
	}
	changed, err := offload.TxChecksumOff(ns, "va")
	if err != nil || !changed {
		t.Fatalf("TxChecksumOff = %v, %v; want changed", changed, err)
	}
	after := offload.Features(n, "va")
	if after["tx-checksumming"] || after["tx-tcp-segmentation"] {
		t.Errorf("after TxChecksumOff: tx-checksumming %v, tx-tcp-segmentation %v; want both off", after["tx-checksumming"], after["tx-tcp-segmentation"])
	}
	if !offload.Features(n, "vb")["tx-checksumming"] {
		t.Errorf("the peer's tx checksumming went off too")
	}
	if changed, err := offload.TxChecksumOff(ns, "va"); err != nil || changed {
		t.Errorf("second TxChecksumOff = %v, %v; want unchanged", changed, err)
	}
	if _, err := offload.TxChecksumOff(ns, "nosuchdev"); err == nil || !strings.Contains(err.Error(), "nosuchdev") {
		t.Errorf("missing device: %v", err)
	}
}
