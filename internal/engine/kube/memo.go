package kube

import (
	"context"
	"slices"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/topology"
)

// Memo is what several preflights of one process share when they check
// one cluster: `doctor --engine kube` runs every built-in study's and
// profile's preflight (16), and each connected, checked the cluster's
// permissions and nodes, and opened a session on the nodes' agents to
// probe mostly the same kernel features. With a Memo they connect and
// check the cluster once, and ask each node's agent only what no earlier
// preflight asked (nothing, after the first few). What the preflights
// decide from the answers (a refusal naming the study's need, the picked
// datapath) is still each one's own. A nil Memo shares nothing, as a
// run's single preflight wants: the cluster may change between runs.
type Memo struct {
	mu    sync.Mutex
	rc    *rest.Config
	cs    kubernetes.Interface
	place *Placement
	nodes map[string]*nodeMemo
}

// nodeMemo is what one node's agent answered so far.
type nodeMemo struct {
	// features are the kernel features probed, each with why it is
	// missing ("" present).
	features map[string]string
	// idle are CPU 0's idle states, read with the cpuidle feature.
	idle    []cpuidle.State
	allowed cpuset.Set
	// allowedRead and topo say the pins' reads were made.
	allowedRead bool
	topo        *topology.Topology
	cni         *cnidetect.Input
	// online are the node's online CPUs, which its RPS masks span, read
	// in every session (onlineRead: a session was opened; online is nil
	// where the agent could not read them).
	online     cpuset.Set
	onlineRead bool
}

// Connect is Connect, once per Memo (nil: each time).
func (m *Memo) Connect(kubeconfig, kubeContext string) (*rest.Config, kubernetes.Interface, error) {
	if m == nil {
		return Connect(kubeconfig, kubeContext)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cs == nil {
		rc, cs, err := Connect(kubeconfig, kubeContext)
		if err != nil {
			return nil, nil, err
		}
		m.rc, m.cs = rc, cs
	}
	return m.rc, m.cs, nil
}

// Preflight is Preflight (the cluster's permissions and nodes), once per
// Memo; a failure is not kept, so the next preflight says it too.
func (m *Memo) Preflight(ctx context.Context, cs kubernetes.Interface, cfg Config) (Placement, error) {
	if m == nil {
		return Preflight(ctx, cs, cfg)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.place == nil {
		p, err := Preflight(ctx, cs, cfg)
		if err != nil {
			return p, err
		}
		m.place = &p
	}
	return *m.place, nil
}

// reads is what node's agent answers to want, pins and cni, asking it
// (ask opens a session) only for what the Memo does not hold yet.
func (m *Memo) reads(node string, want []string, pins pinReads, cni bool, ask func(want []string, pins pinReads, cni bool) (nodeReads, error)) (nodeReads, error) {
	if m == nil {
		return ask(want, pins, cni)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nodes == nil {
		m.nodes = map[string]*nodeMemo{}
	}
	nm := m.nodes[node]
	if nm == nil {
		nm = &nodeMemo{features: map[string]string{}}
		m.nodes[node] = nm
	}
	var newWant []string
	for _, f := range want {
		if _, ok := nm.features[f]; !ok {
			newWant = append(newWant, f)
		}
	}
	more := pinReads{allowed: pins.allowed && !nm.allowedRead, topology: pins.topology && nm.topo == nil}
	moreCNI := cni && nm.cni == nil
	// Every session reads the online CPUs: a node asked nothing else
	// (the client node of a study that needs no kernel feature) is asked
	// once for them, as a preflight without a Memo asks.
	if len(newWant) > 0 || more.allowed || more.topology || moreCNI || !nm.onlineRead {
		r, err := ask(newWant, more, moreCNI)
		if err != nil {
			return r, err
		}
		nm.online, nm.onlineRead = r.online, true
		for _, f := range newWant {
			nm.features[f] = r.missing[f]
		}
		if slices.Contains(newWant, probe.CPUIdle) {
			nm.idle = r.idle
		}
		if more.allowed {
			nm.allowed, nm.allowedRead = r.allowed, true
		}
		if more.topology {
			nm.topo = r.topo
		}
		if moreCNI {
			nm.cni = &r.cni
		}
	}
	// The answers to this preflight's questions alone.
	r := nodeReads{online: nm.online}
	for _, f := range want {
		if why := nm.features[f]; why != "" {
			if r.missing == nil {
				r.missing = map[string]string{}
			}
			r.missing[f] = why
		}
	}
	if slices.Contains(want, probe.CPUIdle) {
		r.idle = nm.idle
	}
	if pins.allowed {
		r.allowed = nm.allowed
	}
	if pins.topology {
		r.topo = nm.topo
	}
	if cni {
		r.cni = *nm.cni
	}
	return r, nil
}
