package kube

import (
	"context"
	"errors"
	"sync"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/metrics/procs"
	"github.com/cnibench/cnibench/internal/netns"
)

// agentKernel reads a node's kernel through its agent: CPU, counters,
// memory and perf are the node's own.
type agentKernel struct{ a *agent.Client }

// CPU returns the node's sampler. A session has one sampler in the agent,
// while two collectors may sample one node over the same window (per-core
// CPU and the nodes' CPU %): they share it, so the second Start does not
// fail with "already running" and both get the window.
func (k agentKernel) CPU() engine.Sampler { return sharedSamplerOf(k.a) }

func (k agentKernel) Ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	return k.a.IfStats(ifs)
}

func (k agentKernel) MemoryPercent() (float64, error) { return k.a.MemoryPercent() }

func (k agentKernel) Qdiscs(ifs []netns.Iface) ([]impair.Stats, error) { return k.a.QdiscStats(ifs) }

// Daemons has the agent list the node's network daemons: processes in
// the node's network namespace, which on nodes sharing a machine (the
// test cluster) tells one node's kube-proxy from the other's.
func (k agentKernel) Daemons(names []string) ([]procs.Proc, error) { return k.a.Daemons(names...) }

// Impair has the node's agent install the netem: it journals the
// device's qdisc on the node first and puts it back when the session
// ends, or at its next replay if the controller died.
func (k agentKernel) Impair(dev netns.Iface, s impair.Spec, ingress bool) (netns.Iface, impair.Spec, func() error, error) {
	on, installed, err := k.a.Impair(dev, agent.ImpairArgs{Spec: s, Ingress: ingress})
	if err != nil {
		// The agent reverted what it had journaled before answering.
		return netns.Iface{}, impair.Spec{}, nil, err
	}
	return netns.Iface{Netns: dev.Netns, Name: on}, installed, func() error { return k.a.Unimpair(dev) }, nil
}

// CPP runs perf in the node's agent over the window: the agent chooses
// the event for its own PMU and computes the breakdown there (the samples
// and kernel symbols are the node's).
func (k agentKernel) CPP(ifs []netns.Iface, procs []string) (engine.MetricWindow, error) {
	return agentCPP{a: k.a, ifs: ifs, procs: procs}, nil
}

// sharedSampler runs the metrics sampler inside the node's agent for
// every collector of a window: the first Start starts it, the first Stop
// stops it, and every Stop of the same window returns that window.
type sharedSampler struct {
	a       *agent.Client
	mu      sync.Mutex
	users   int
	stopped bool
	w       metrics.Window
	err     error
}

var samplers = struct {
	sync.Mutex
	m map[*agent.Client]*sharedSampler
}{m: map[*agent.Client]*sharedSampler{}}

func sharedSamplerOf(a *agent.Client) *sharedSampler {
	samplers.Lock()
	defer samplers.Unlock()
	s, ok := samplers.m[a]
	if !ok {
		s = &sharedSampler{a: a}
		samplers.m[a] = s
	}
	return s
}

func (s *sharedSampler) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		if err := s.a.SampleStart(); err != nil {
			return err
		}
		s.stopped = false
	}
	s.users++
	return nil
}

func (s *sharedSampler) Stop() (metrics.Window, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		return metrics.Window{}, errors.New("sampler not started")
	}
	if !s.stopped {
		s.w, s.err = s.a.SampleStop()
		s.stopped = true
	}
	s.users--
	return s.w, s.err
}

type agentCPP struct {
	a     *agent.Client
	ifs   []netns.Iface
	procs []string
}

func (c agentCPP) Start(context.Context) error { return c.a.CPPStart(c.ifs, c.procs...) }
func (c agentCPP) Stop(context.Context) error  { return c.a.CPPStop() }
func (c agentCPP) Metrics(context.Context) (map[string]float64, error) {
	res, err := c.a.CPPReport()
	return res.Metrics, err
}
