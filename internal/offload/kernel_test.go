package offload_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/offload"
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
