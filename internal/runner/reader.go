package runner

import (
	"context"
	"path/filepath"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/metrics"
	"github.com/cnibench/cnibench/internal/metrics/cpp"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
)

// nodeReader reads a node's kernel for the per-trial metrics beyond CPU
// (cpp: true, counters: true): directly on the local engine, whose nodes
// are namespaces of this kernel, and through the node's agent on kube,
// whose nodes are other machines. iptables-save and nft need no reader:
// they run through engine.Node.Start, which is the agent's container on
// kube.
type nodeReader interface {
	// ifaces reads devices' counters (`ip -s link`).
	ifaces(ifs []netns.Iface) ([]ifstats.Counters, error)
	// memoryPercent is the node's memory in use.
	memoryPercent() (float64, error)
	// cpp returns a recorder of the CPU cost per packet on the node,
	// counting packets on ifs.
	// cpp samples the node with perf; ev is the event preflight chose
	// for this machine, which a remote node's agent chooses for itself.
	cpp(ev cpp.Event, ifs []netns.Iface) (cppRecorder, error)
}

// cppRecorder brackets one window (cpp.Recorder, or its remote twin).
type cppRecorder interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) (cpp.Result, error)
}

// localReader reads this machine's kernel.
type localReader struct{ procRoot string }

func (localReader) ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	out := make([]ifstats.Counters, len(ifs))
	for i, ifc := range ifs {
		c, err := ifstats.Read(ifc)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// memoryPercent reads the machine's memory: emulated nodes share it.
func (r localReader) memoryPercent() (float64, error) {
	root := r.procRoot
	if root == "" {
		root = "/proc"
	}
	return metrics.MemoryPercent(filepath.Join(root, "meminfo"))
}

func (localReader) cpp(ev cpp.Event, ifs []netns.Iface) (cppRecorder, error) {
	m, err := cpp.DefaultMap()
	if err != nil {
		return nil, err
	}
	return &cpp.Recorder{Map: m, Event: ev, Ifaces: ifs}, nil
}

// agentReader reads a kube node through its agent: counters, memory and
// perf are the node's own.
type agentReader struct{ a *agent.Client }

func (r agentReader) ifaces(ifs []netns.Iface) ([]ifstats.Counters, error) {
	return r.a.IfStats(ifs)
}

func (r agentReader) memoryPercent() (float64, error) { return r.a.MemoryPercent() }

func (r agentReader) cpp(_ cpp.Event, ifs []netns.Iface) (cppRecorder, error) {
	return &agentCPP{a: r.a, ifs: ifs}, nil
}

// agentCPP runs perf in the node's agent over the window: the agent
// computes the breakdown there (the samples and kernel symbols are the
// node's) and returns cpp.Result.
type agentCPP struct {
	a   *agent.Client
	ifs []netns.Iface
}

func (c *agentCPP) Start(context.Context) error { return c.a.CPPStart(c.ifs) }
func (c *agentCPP) Stop(context.Context) (cpp.Result, error) {
	return c.a.CPPStop()
}
