package knob

import (
	"errors"
	"fmt"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/lbmap"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/socklb"
)

// Cilium's kube-proxy replacement (kubeProxy: cilium) for knobs
// netfilter and service-path: instead of kube-proxy's rules on each
// node, one socket load balancer (internal/socklb) serving every pod's
// namespace translates ClusterIPs at connect(). Knob netfilter attaches
// it with the filler Services for the pods' lifetime; knob service-path
// adds the measured Services for a trial. Its BPF links die with
// cnibench, so nothing needs journaling. serviceDatapathLB (below) fills
// the other table Cilium keeps: the cilium datapath's, translated per
// packet whatever the Service proxy.

// socketLBState is the key of the attached load balancer in Target.State.
const socketLBState = "socket-lb"

type socketLB struct {
	lb   *socklb.LB
	fill []netfilter.Service
}

// attachSocketLB attaches the load balancer to cnibench's cgroup, serves
// the nodes' and pods' namespaces and loads the filler Services.
func attachSocketLB(t *Target, fill []netfilter.Service) (func() error, string, error) {
	dir, err := cgroup2.Own()
	if err != nil {
		return nil, "", fmt.Errorf("kube-proxy replacement: %w", err)
	}
	lb, err := socklb.Attach(dir)
	if err != nil {
		return nil, "", fmt.Errorf("kube-proxy replacement: %w", err)
	}
	undo := func() error {
		delete(t.State, socketLBState)
		if err := lb.Close(); err != nil {
			return fmt.Errorf("kube-proxy replacement: %w", err)
		}
		return nil
	}
	nss, err := servedNamespaces(t)
	if err == nil {
		for _, ns := range nss {
			if err = lb.Serve(ns); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = lb.Set(fill)
	}
	if err != nil {
		return undo, "", fmt.Errorf("kube-proxy replacement: %w", err)
	}
	t.State[socketLBState] = &socketLB{lb: lb, fill: fill}
	what := fmt.Sprintf("BPF connect4/sendmsg4/recvmsg4/getpeername4 on cgroup %s, serving %d namespaces", dir, len(nss))
	return undo, what, nil
}

// servedNamespaces are the namespaces of both nodes and of every pod,
// each once: Cilium's socket LB serves every pod and the host.
func servedNamespaces(t *Target) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(ns string) {
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	for _, n := range []engine.Node{t.Cluster.Server(), t.Cluster.Client()} {
		add(n.Netns())
	}
	for _, p := range append(append([]engine.Pod(nil), t.Servers...), t.Clients...) {
		pn, ok := p.(interface{ Netns() string })
		if !ok {
			return nil, fmt.Errorf("pod %s has no namespace of its own to serve (the local engine's pods have)", p.Name())
		}
		add(pn.Netns())
	}
	return out, nil
}

// serviceSocketLB adds the measured Services to the attached load
// balancer for a trial; the undo leaves the fillers alone again.
func serviceSocketLB(t *Target, bench []netfilter.Service) (Undo, error) {
	s, ok := t.State[socketLBState].(*socketLB)
	if !ok {
		return nil, errors.New("service path: the kube-proxy replacement's socket load balancer is not attached (knob netfilter attaches it)")
	}
	if err := s.lb.Set(append(append([]netfilter.Service(nil), s.fill...), bench...)); err != nil {
		return nil, fmt.Errorf("service path: %w", err)
	}
	return func() error {
		if err := s.lb.Set(s.fill); err != nil {
			return fmt.Errorf("service path: %w", err)
		}
		return nil
	}, nil
}

// serviceDatapathLB writes the measured Services (and the fillers of the
// entry's netfilter state) into the datapath's own tables for a trial,
// when it has them; the undo empties them. Nil, nil otherwise.
func serviceDatapathLB(t *Target, bench []netfilter.Service) (Undo, error) {
	c, ok := t.Cluster.(interface{ Datapath() datapath.Datapath })
	if !ok {
		return nil, nil
	}
	lb, ok := c.Datapath().(lbmap.Translator)
	if !ok {
		return nil, nil
	}
	fill, err := fillers(t.Datapath.Netfilter)
	if err != nil {
		return nil, err
	}
	undo := func() error {
		if err := lb.SetServices(nil); err != nil {
			return fmt.Errorf("service path: %w", err)
		}
		return nil
	}
	if err := lb.SetServices(append(fill, bench...)); err != nil {
		return undo, fmt.Errorf("service path: %w", err)
	}
	return undo, nil
}

// Counters are the BPF counters the trial's path has (engine.Counter):
// the datapath's own, when it counts (cilium), and the attached socket
// load balancer's. The bpf collector reads them over the window.
func (t *Target) Counters() []engine.Counter {
	var out []engine.Counter
	if c, ok := t.Cluster.(interface{ Datapath() datapath.Datapath }); ok {
		if dc, ok := c.Datapath().(engine.Counter); ok {
			out = append(out, dc)
		}
	}
	if s, ok := t.State[socketLBState].(*socketLB); ok {
		out = append(out, s.lb)
	}
	return out
}
