package local

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
)

// Pods: scaling a node's pods, and one pod's set-up and teardown, timed
// with its set-up by step.

// ScalePods makes each node run exactly r pods and returns the server
// node's pods and the client node's pods, index-aligned into pairs.
func (c *Cluster) ScalePods(ctx context.Context, r int) (servers, clients []*Pod, err error) {
	if r > datapath.MaxPodsPerNode {
		return nil, nil, fmt.Errorf("%d pods per node requested; the local engine supports %d", r, datapath.MaxPodsPerNode)
	}
	for _, n := range c.Nodes() {
		for len(n.pods) > r {
			last := n.pods[len(n.pods)-1]
			if err := c.deletePod(last); err != nil {
				// The pod is left, in part: the runner must not make
				// pods again beside it (engine.ErrLeftBehind).
				return nil, nil, engine.LeftBehind(err)
			}
			n.pods = n.pods[:len(n.pods)-1]
		}
		for len(n.pods) < r {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			p, err := c.addPod(ctx, n, c.podName(n), len(n.pods))
			if err != nil {
				return nil, nil, err
			}
			n.pods = append(n.pods, p)
			if !p.hostNet {
				c.mu.Lock()
				c.pods = append(c.pods, p)
				c.mu.Unlock()
			}
		}
	}
	return append([]*Pod(nil), c.server.pods...), append([]*Pod(nil), c.client.pods...), nil
}

// podName names the next pod of node n: srv0, cli3.
func (c *Cluster) podName(n *Node) string { return c.role(n) + strconv.Itoa(len(n.pods)) }

// role is the prefix of node n's pod names.
func (c *Cluster) role(n *Node) string {
	if n == c.client {
		return "cli"
	}
	return "srv"
}

// addPod creates and wires pod index of node n and times it: the
// namespace plus the wiring (AttachPod, or CNI ADD with WiringCNI), with
// its breakdown (PodTime.Phases).
func (c *Cluster) addPod(ctx context.Context, n *Node, name string, index int) (*Pod, error) {
	p := &Pod{node: n, name: name, index: index}
	if datapath.IsHostNetwork(c.cfg.Datapath) {
		// hostNetwork: the pod is the node's namespace and address. It
		// has no network of its own to set up, so no set-up time (a
		// copy of two struct fields would read as a pod set up in
		// nanoseconds, and as a significant gain against every CNI).
		p.ns, p.ip, p.hostNet = n.ns, n.ip, true
		return p, nil
	}
	start := time.Now()
	p.ns = c.nsName(p.name)
	if err := c.addNetns(p.ns); err != nil {
		return nil, err
	}
	nsTook := time.Since(start)
	steps := datapath.NewSteps()
	var att datapath.Attachment
	var err error
	if n.cni != nil {
		att, err = c.attachCNI(ctx, n, p, steps)
	} else {
		att, err = c.cfg.Datapath.AttachPod(n.info(), p.datapathPod(steps))
	}
	if err != nil {
		// Nothing of a pod that failed stays: its namespace would block
		// the name (a later burst's pod i) until the run ends, and its
		// half-made devices hold its address. If some of it does stay,
		// the error says so (engine.ErrLeftBehind): the runner, which
		// may make the pods again after a failed Scale, stops instead.
		err = fmt.Errorf("attach pod %s to node %s: %w", p.name, n.name, err)
		var undo error
		if n.cni == nil {
			undo = c.detachNetlink(p, true)
		}
		undo = errors.Join(undo, c.removeNetns(p.ns))
		return nil, errors.Join(err, engine.LeftBehind(undo))
	}
	p.setup = time.Since(start)
	p.phases = phases(nsTook, steps.List(), p.setup)
	p.ip, p.hostVeth = att.IP, att.HostVeth
	return p, nil
}

// datapathPod is the pod as AttachPod and DetachPod see it.
func (p *Pod) datapathPod(steps *datapath.Steps) datapath.Pod {
	return datapath.Pod{Name: p.ns, Netns: p.ns, Index: p.index, ID: p.name, Steps: steps}
}

// phases is a pod's set-up breakdown: the namespace, the wiring's steps,
// and what they did not cover, so the phases sum to total.
func phases(netnsTook time.Duration, steps []datapath.Step, total time.Duration) []engine.Phase {
	out := []engine.Phase{{Name: engine.PhaseNetns, Took: netnsTook}}
	rest := total - netnsTook
	for _, s := range steps {
		out = append(out, engine.Phase{Name: s.Name, Took: s.Took})
		rest -= s.Took
	}
	return append(out, engine.Phase{Name: engine.PhaseOther, Took: rest})
}

// deletePod stops the pod's processes, then unwires it (CNI DEL with
// WiringCNI; detachNetlink otherwise) and deletes its namespace, and
// times those two steps: its network's teardown. Stopping processes is
// the containers' end, not the network's (kubelet stops containers
// before it tears down the sandbox's network), so it is not counted.
func (c *Cluster) deletePod(p *Pod) error { return c.deletePodWith(p, false) }

// deletePodWith is deletePod; devices: with netlink wiring, also delete
// the pod's eth0 before its namespace, as a CNI plugin's DEL does, so
// its devices are gone when it returns (see detachNetlink).
// Every error names the pod and its node: what stays of it when the
// deletion fails (a start-up burst's pod is in no list the error could
// be read against).
func (c *Cluster) deletePodWith(p *Pod, devices bool) error {
	if p.hostNet {
		return nil
	}
	if err := c.unwirePod(p, devices); err != nil {
		return fmt.Errorf("delete pod %s from node %s: %w", p.name, p.node.name, err)
	}
	return nil
}

// unwirePod is deletePodWith's work: stop, unwire, delete the namespace.
func (c *Cluster) unwirePod(p *Pod, devices bool) error {
	if err := c.kill(p.ns); err != nil {
		return err
	}
	start := time.Now()
	if err := c.detachCNI(p); err != nil {
		return err
	}
	if p.node.cni == nil {
		if err := c.detachNetlink(p, devices); err != nil {
			return err
		}
	}
	if err := c.removeNetns(p.ns); err != nil {
		return err
	}
	p.teardown = time.Since(start)
	return nil
}

// detachNetlink unwires a pod wired by AttachPod: the datapath's own
// state of the pod goes (datapath.Detacher: OVS's flows), and with
// devices its eth0 too, which takes a veth peer with it at once.
//
// Without devices they go with the namespace, which deletePod deletes
// next: the kernel destroys a deleted namespace's devices later, from a
// work queue (cleanup_net), so that teardown stays under a millisecond
// where deleting a device waits for RCU grace periods (about 25 ms
// here, which a CNI plugin's DEL pays). Until then the old devices hold
// their names, routes and addresses: a pod created again under the same
// name or at the same address soon after meets them (wire.VethIntoPod
// waits for the name, wire.PodRoute replaces the route), and an old
// device still answers ARP for its address. Pod start-up bursts delete
// devices, so a burst leaves nothing behind for the pods after it.
func (c *Cluster) detachNetlink(p *Pod, devices bool) error {
	if d, ok := c.cfg.Datapath.(datapath.Detacher); ok {
		if err := d.DetachPod(p.node.info(), p.datapathPod(nil)); err != nil {
			return fmt.Errorf("detach: %w", err)
		}
	}
	if !devices {
		return nil
	}
	h, err := netns.Handle(p.ns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(datapath.PodEth)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return fmt.Errorf("find %s in %s: %w", datapath.PodEth, p.ns, err)
	}
	if err := h.LinkDel(l); err != nil {
		return fmt.Errorf("ip -n %s link del %s: %w", p.ns, datapath.PodEth, err)
	}
	return nil
}
