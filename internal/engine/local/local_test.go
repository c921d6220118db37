package local

import (
	"context"
	"fmt"
	"os"
	"strings"
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

// failingAttach is a datapath whose AttachPod wires pod index 1 and then
// fails, once: a pod half made.
type failingAttach struct {
	datapath.Datapath
	failed bool
}

func (f *failingAttach) AttachPod(n datapath.Node, p datapath.Pod) (datapath.Attachment, error) {
	att, err := f.Datapath.AttachPod(n, p)
	if err == nil && p.Index == 1 && !f.failed {
		f.failed = true
		return att, fmt.Errorf("injected failure after wiring pod %s", p.Name)
	}
	return att, err
}

// A pod whose wiring fails leaves nothing: its namespace goes at once, so
// the same pod can be made again (before, the name stayed taken until the
// run ended and every later attempt failed on it).
func TestFailedPodLeavesNothing(t *testing.T) {
	kerneltest.RequireRoot(t)
	d, _ := catalog.Lookup("bridge")
	kerneltest.RequireFeatures(t, d)
	c := upCluster(t, &failingAttach{Datapath: d})
	if _, _, err := c.ScalePods(context.Background(), 2); err == nil {
		t.Fatal("no error from the injected failure")
	}
	for _, ns := range []string{c.nsName("srv1"), c.nsName("cli1")} {
		if netns.Exists(ns) {
			t.Errorf("namespace %s of the failed pod still exists", ns)
		}
	}
	if _, _, err := c.ScalePods(context.Background(), 2); err != nil {
		t.Fatalf("the pods again after the failure: %v", err)
	}
}

// Pods' and nodes' interfaces do not solicit routers (addNetns): the
// solicitations would go on for the whole run and overlays flood them
// across nodes into the counted netfilter paths.
func TestInterfacesDoNotSolicitRouters(t *testing.T) {
	kerneltest.RequireRoot(t)
	if _, err := os.Stat("/proc/sys/net/ipv6"); err != nil {
		t.Skipf("skipped: this kernel has no IPv6 (%v)", err)
	}
	d, _ := catalog.Lookup("flannel-vxlan")
	kerneltest.RequireFeatures(t, d)
	c := upCluster(t, d)
	servers, _, err := c.ScalePods(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []netns.Iface{c.server.PodIface(servers[0]), c.server.Underlay()} {
		var got []byte
		err := netns.Do(x.Netns, func() (err error) {
			got, err = os.ReadFile("/proc/sys/net/ipv6/conf/" + x.Name + "/router_solicitations")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.TrimSpace(string(got)); s != "0" {
			t.Errorf("%s in %s: router_solicitations %s, want 0", x.Name, x.Netns, s)
		}
	}
}
