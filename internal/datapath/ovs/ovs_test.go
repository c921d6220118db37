package ovs

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestFeaturesExplainMissingOVS: where the kernel lacks the openvswitch
// module, the datapath is refused with a reason that names it.
func TestFeaturesExplainMissingOVS(t *testing.T) {
	kerneltest.RequireRoot(t)
	err := probe.Require(New().Features()...)
	if err == nil {
		t.Skip("skipped: this machine has the OVS datapath and ovs-dpctl")
	}
	if !errors.Is(err, probe.ErrUnsupported) || !(strings.Contains(err.Error(), "openvswitch") || strings.Contains(err.Error(), "ovs-dpctl")) {
		t.Errorf("refusal does not name openvswitch or ovs-dpctl: %v", err)
	}
	t.Logf("refused as expected: %v", err)
}

func TestOVS(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := New()
	kerneltest.RequireFeatures(t, d)
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	defer func() {
		if t.Failed() {
			for _, n := range c.Nodes() {
				out, _ := exec.Command("ip", "netns", "exec", n.Netns(), "ovs-dpctl", "dump-flows", Bridge).CombinedOutput()
				t.Logf("ovs-dpctl dump-flows on %s:\n%s", n.Name(), out)
			}
		}
	}()
	dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
	dptest.TCPEcho(t, clients[1], servers[1], 256<<10)
	dptest.UDPEcho(t, servers[0], clients[0], 1472)
	dptest.TCPEcho(t, servers[0], servers[1], 64<<10)
	dptest.UDPEcho(t, servers[1], servers[0], 100)
}
