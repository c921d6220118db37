package local

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
)

// burstInfix marks a start-up burst's pods (srvb0, srvb1, ...), so they
// are never mistaken for the measured pods.
const burstInfix = "b"

var _ engine.PodStarter = (*Cluster)(nil)

// StartPods implements engine.PodStarter: a burst of n pods on one node,
// each in its own goroutine as kubelet starts pod sandboxes in parallel,
// at most concurrency wiring at a time. Every pod is set up exactly as
// a measured pod is (addPod: namespace, then AttachPod or CNI ADD) and
// deleted concurrently too, devices first as CNI DEL does
// (deletePodWith), so nothing of the burst outlives it: the burst's pods
// take the pod indices after the node's measured pods, and the pods
// created there next (the next burst, or measured pods when the study
// scales up) must not meet a device still answering for the address.
// On error every pod of the burst that was made is deleted before the
// error is returned. A pod of the burst that could not be deleted (or a
// failed pod not undone, addPod) is left behind, and the error says so
// (engine.ErrLeftBehind): see StartPods' teardown below.
func (c *Cluster) StartPods(ctx context.Context, node string, n, concurrency int) ([]engine.PodTime, error) {
	nd := c.nodeNamed(node)
	if err := engine.CheckBurst(n, concurrency); err != nil {
		return nil, err
	}
	switch {
	case nd == nil:
		return nil, fmt.Errorf("start pods: no node %q (nodes: %s, %s)", node, c.server.name, c.client.name)
	case datapath.IsHostNetwork(c.cfg.Datapath):
		return nil, fmt.Errorf("start pods: datapath %s runs pods in the node's network (hostNetwork): they have no network to start", c.cfg.Datapath.Name())
	case len(nd.pods)+n > datapath.MaxPodsPerNode:
		return nil, fmt.Errorf("start pods: %d more pods on node %s, which runs %d, exceed the %d pods a node may have", n, nd.name, len(nd.pods), datapath.MaxPodsPerNode)
	}
	pods := make([]*Pod, n)
	errs := make([]error, n)
	ready := make([]time.Duration, n)
	turns := make(chan struct{}, concurrency)
	base := len(nd.pods)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case turns <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-turns }()
			pods[i], errs[i] = c.addPod(ctx, nd, c.role(nd)+burstInfix+strconv.Itoa(i), base+i)
			ready[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	out := make([]engine.PodTime, n)
	for i, p := range pods {
		if p != nil {
			out[i] = p.time()
			out[i].Ready = ready[i]
		}
	}
	// Teardown in parallel as well, after every pod of the burst was
	// ready, as a burst of deletions would go. A pod whose deletion
	// failed stays, in part: its namespace (still in c.created, so
	// Close deletes it), its devices, with netlink wiring its datapath
	// state (OVS's flows), with wiring cni its host-local lease in the
	// state directory. The burst's pods are in no node's list, and the
	// next burst makes its pods under the same names and indices: the
	// same namespace, host veth name and CNI container ID, the same
	// address. Each of its pods would fail on the leftover, or be wired
	// beside a device still answering for its address; so would the
	// measured pods a larger replica count makes at those indices. The
	// runner must not run the trial again on this cluster but stop
	// (engine.ErrLeftBehind); its teardown (Close) removes the rest.
	derrs := make([]error, n)
	for i, p := range pods {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.deletePodWith(p, true); err != nil {
				derrs[i] = engine.LeftBehind(err)
				return
			}
			out[i].Teardown = p.teardown
		}()
	}
	wg.Wait()
	if err := errors.Join(append(errs, derrs...)...); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Cluster) nodeNamed(name string) *Node {
	for _, n := range c.Nodes() {
		if n.name == name {
			return n
		}
	}
	return nil
}
