package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/netns"
)

func upCluster(t *testing.T, d datapath.Datapath) *Cluster {
	t.Helper()
	return upClusterWith(t, Config{RunID: kerneltest.RunID(), Datapath: d, Kill: cleanup.KillInNetns})
}

// upClusterWith builds a cluster that is closed when the test ends (also
// when it fails); no namespace of the run may be left then.
func upClusterWith(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	if cfg.Recorder == nil {
		cfg.Recorder = kerneltest.Journal(t, cfg.RunID)
	}
	c, err := Up(context.Background(), cfg)
	if err != nil {
		t.Fatalf("up %s (wiring %q): %v", cfg.Datapath.Name(), cfg.Wiring, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		left, err := netns.List(Prefix + cfg.RunID + "-")
		if err != nil {
			t.Error(err)
		}
		for _, ns := range left {
			t.Errorf("namespace %s left behind", ns)
		}
	})
	return c
}

func TestScalePodsDownRemovesNamespaces(t *testing.T) {
	kerneltest.RequireRoot(t)
	d, _ := catalog.Lookup("flannel-vxlan")
	kerneltest.RequireFeatures(t, d)
	c := upCluster(t, d)
	servers, clients, err := c.ScalePods(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(servers, clients...) {
		if p.SetupLatency() <= 0 {
			t.Errorf("pod %s: no setup latency recorded", p.Name())
		}
	}
	gone := servers[2].Netns()
	if _, _, err := c.ScalePods(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if netns.Exists(gone) {
		t.Errorf("namespace %s still exists after scaling down", gone)
	}
	if n := len(c.server.Pods()); n != 1 {
		t.Errorf("%d server pods, want 1", n)
	}
}

func TestPodMTU(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, d := range catalog.All() {
		t.Run(d.Name(), func(t *testing.T) {
			kerneltest.RequireFeatures(t, d)
			c := upCluster(t, d)
			servers, _, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := podMTU(t, c, servers[0]), d.MTU(1500); got != want {
				t.Errorf("pod MTU %d, want %d", got, want)
			}
			// Each CNI's own default (connectivity_test.go).
			if want, ok := wantMTU[d.Name()]; ok && d.MTU(1500) != want {
				t.Errorf("%s MTU on a 1500-byte underlay = %d, want %d", d.Name(), d.MTU(1500), want)
			}
		})
	}
}

var _ = fmt.Sprintf
