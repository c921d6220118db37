package kube

import (
	"context"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
)

// agentKernel reads a node's kernel through its agent: CPU, counters,
// memory and perf are the node's own.
type agentKernel struct{ a *agent.Client }

func (k agentKernel) CPU() engine.Sampler { return agentSampler{k.a} }

func (k agentKernel) Ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	return k.a.IfStats(ifs)
}

func (k agentKernel) MemoryPercent() (float64, error) { return k.a.MemoryPercent() }

// CPP runs perf in the node's agent over the window: the agent chooses
// the event for its own PMU and computes the breakdown there (the samples
// and kernel symbols are the node's).
func (k agentKernel) CPP(ifs []netns.Iface) (engine.MetricWindow, error) {
	return agentCPP{a: k.a, ifs: ifs}, nil
}

// agentSampler runs the metrics sampler inside the node's agent.
type agentSampler struct{ a *agent.Client }

func (s agentSampler) Start() error                  { return s.a.SampleStart() }
func (s agentSampler) Stop() (metrics.Window, error) { return s.a.SampleStop() }

type agentCPP struct {
	a   *agent.Client
	ifs []netns.Iface
}

func (c agentCPP) Start(context.Context) error { return c.a.CPPStart(c.ifs) }
func (c agentCPP) Stop(context.Context) (map[string]float64, error) {
	res, err := c.a.CPPStop()
	return res.Metrics, err
}
