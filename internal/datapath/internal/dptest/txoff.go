package dptest

import (
	"os/exec"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/offload"
)

// CalicoTunnelTxOff checks that a Calico tunnel datapath turns its
// tunnel dev's tx checksumming off, and with it TSO, where Felix would:
// built by mk as if on a kernel up to 5.7.0, both are off on every node
// (ethtool -k), the datapath's mode says so, and a pod's 1 MiB still
// crosses to the other node; as if on a later kernel, the device keeps
// both and the mode says that. Skipped, saying why, without d's
// features or ethtool.
func CalicoTunnelTxOff(t *testing.T, mk func(release string) datapath.Datapath, dev string) {
	t.Helper()
	kerneltest.RequireRoot(t)
	if _, err := exec.LookPath("ethtool"); err != nil {
		t.Skip("skipped: ethtool not installed (it reads the device's features)")
	}
	for _, tc := range []struct {
		release string
		off     bool
	}{{"5.4.0-150-generic", true}, {"6.1.0-18-amd64", false}} {
		t.Run(tc.release, func(t *testing.T) {
			d := mk(tc.release)
			kerneltest.RequireFeatures(t, d)
			c, servers, clients := UpPods(t, d, 1500, 1)
			for _, n := range c.Nodes() {
				f := offload.Features(n, dev)
				if f == nil {
					t.Fatalf("%s: ethtool -k %s read nothing", n.Name(), dev)
				}
				if csum, tso := f["tx-checksumming"], f["tx-tcp-segmentation"]; csum == tc.off || tso == tc.off {
					t.Errorf("%s: %s tx-checksumming %v, tx-tcp-segmentation %v; want both %v", n.Name(), dev, csum, tso, !tc.off)
				}
			}
			want := calicopod.TxOnMode
			if tc.off {
				want = calicopod.TxOffMode
			}
			if mode, standIn := d.(datapath.Moded).BuiltMode(); mode != want || standIn != "" {
				t.Errorf("built mode %q, stand-in %q; want %q and none", mode, standIn, want)
			}
			TCPEcho(t, servers[0], clients[0], 1<<20)
		})
	}
}
