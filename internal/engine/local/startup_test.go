package local

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
)

// TestKernelStartPodsFifty starts 50 pods at once on one node with both
// wirings (seed 004's Fig. 15b goes to 50 pods): every pod is wired,
// its breakdown names the steps of its wiring and sums to its set-up,
// it was ready no sooner than its own set-up took, and the burst leaves
// the node as it found it.
func TestKernelStartPodsFifty(t *testing.T) {
	kerneltest.RequireRoot(t)
	d, err := catalog.Lookup("bridge")
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.RequireFeatures(t, d)
	for _, tc := range []struct {
		wiring string
		steps  []string
	}{
		{WiringNetlink, []string{engine.PhaseNetns, datapath.StepLink, datapath.StepPort, datapath.StepAddress, datapath.StepRoutes, engine.PhaseOther}},
		{WiringCNI, []string{engine.PhaseNetns, "cni bridge", engine.PhaseOther}},
	} {
		t.Run(tc.wiring, func(t *testing.T) {
			if tc.wiring == WiringCNI {
				kerneltest.RequireCNIPlugins(t, cniconf.TypeLoopback, cniconf.TypeBridge, cniconf.TypeHostLocal)
			}
			c := upClusterWith(t, Config{RunID: kerneltest.RunID(), Datapath: d, Wiring: tc.wiring, Kill: cleanup.KillInNetns})
			servers, clients, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			before := c.Namespaces()
			times, err := c.StartPods(context.Background(), ServerNode, 50, 50)
			if err != nil {
				t.Fatal(err)
			}
			if len(times) != 50 {
				t.Fatalf("%d pod times, want 50", len(times))
			}
			for _, pt := range times {
				checkBurstPod(t, pt, tc.steps)
			}
			if after := c.Namespaces(); !slices.Equal(before, after) {
				t.Errorf("namespaces after the burst %v, before %v", after, before)
			}
			if got := len(c.PodTimes()); got != 2 {
				t.Errorf("PodTimes lists %d pods; want the 2 measured ones, not the burst's", got)
			}
			// The measured pods still talk across nodes.
			if err := tcpRoundTrip(servers[0], clients[0], 7300, 64<<10); err != nil {
				t.Errorf("measured pair after the burst: %v", err)
			}
		})
	}
}

func checkBurstPod(t *testing.T, pt engine.PodTime, steps []string) {
	t.Helper()
	var names []string
	var sum time.Duration
	for _, ph := range pt.Phases {
		names = append(names, ph.Name)
		sum += ph.Took
		if ph.Took < 0 {
			t.Errorf("pod %s: phase %s took %v", pt.Pod, ph.Name, ph.Took)
		}
	}
	if !slices.Equal(names, steps) {
		t.Errorf("pod %s: phases %v, want %v", pt.Pod, names, steps)
	}
	if sum != pt.Setup || pt.Setup <= 0 {
		t.Errorf("pod %s: phases sum to %v, set-up %v", pt.Pod, sum, pt.Setup)
	}
	if pt.Ready < pt.Setup {
		t.Errorf("pod %s: ready %v after the burst began, sooner than its own set-up %v", pt.Pod, pt.Ready, pt.Setup)
	}
	if pt.Teardown <= 0 {
		t.Errorf("pod %s: no teardown time", pt.Pod)
	}
	if !strings.HasPrefix(pt.Pod, "srv"+burstInfix) {
		t.Errorf("burst pod named %q", pt.Pod)
	}
}

// TestKernelStartPodsEveryDatapath runs two bursts on every datapath this
// kernel has, then adds a measured pod at the indices the bursts used:
// a datapath with state per pod (OVS's flows) must have dropped the
// burst's (DetachPod), or the new pod collides with it. The new pod must
// reach the other node.
func TestKernelStartPodsEveryDatapath(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, d := range catalog.All() {
		t.Run(d.Name(), func(t *testing.T) {
			if datapath.IsHostNetwork(d) {
				t.Skipf("skipped: %s pods share the node's network, nothing to start", d.Name())
			}
			kerneltest.RequireFeatures(t, d)
			c := upCluster(t, d)
			if _, _, err := c.ScalePods(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				times, err := c.StartPods(context.Background(), ServerNode, 6, 3)
				if err != nil {
					t.Fatal(err)
				}
				for _, pt := range times {
					if pt.Ready < pt.Setup || len(pt.Phases) < 3 {
						t.Errorf("pod %s: ready %v, set-up %v, phases %v", pt.Pod, pt.Ready, pt.Setup, pt.Phases)
					}
				}
			}
			servers, clients, err := c.ScalePods(context.Background(), 2)
			if err != nil {
				t.Fatalf("a pod at the burst's index after it: %v", err)
			}
			if err := tcpRoundTrip(servers[1], clients[0], 7310, 64<<10); err != nil {
				t.Errorf("new pod after two bursts: %v", err)
			}
		})
	}
}

// TestStartPodsRefusesBadCounts needs no kernel: the counts are checked
// before anything is made.
func TestStartPodsRefusesBadCounts(t *testing.T) {
	d, _ := catalog.Lookup("bridge")
	c := &Cluster{cfg: Config{Datapath: d}, server: &Node{name: ServerNode}, client: &Node{name: ClientNode}}
	for _, tc := range []struct {
		node     string
		n, conc  int
		contains string
	}{
		{ServerNode, 5, 6, "at once <= pods"},
		{ServerNode, 0, 0, "at once <= pods"},
		{ServerNode, datapath.MaxPodsPerNode + 1, 1, "exceed"},
		{"nowhere", 1, 1, "no node"},
	} {
		if _, err := c.StartPods(context.Background(), tc.node, tc.n, tc.conc); err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("StartPods(%s, %d, %d) = %v, want an error containing %q", tc.node, tc.n, tc.conc, err, tc.contains)
		}
	}
}
