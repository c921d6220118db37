package runner

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/envinfo"
	"github.com/cnibench/cnibench/internal/hostcpus"
	"github.com/cnibench/cnibench/internal/lbmap"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/iperf3"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// prepareWorkloads checks and resolves, at preflight, the workload
// options that need this machine or the built datapaths
// (workload.Prepare): placement names from the CPU topology (this
// machine's, or the server node's the engine read), the MSS
// bound of each datapath's pod MTU, a pktgen sender. What they resolved
// to goes to env.json's notes; the trials run the resolved variants
// (plan.workloads.Apply) and mark not comparable samples (Mark).
func prepareWorkloads(s *study.Study, p *plan, facts engine.Facts) error {
	m := workload.Machine{ServerCPUs: p.serverCPUs, ClientCPUs: p.clientCPUs, Remote: facts.Remote, Task: taskTool}
	if t := facts.Topology; t != nil { // a cluster node's, read by the engine
		m.Topology, m.Where, m.Allowed, m.AllowedWhy = t.Topology, t.Where, t.Allowed, t.AllowedWhy
	}
	var dps []workload.Datapath
	if !facts.Remote {
		if err := checkFileLimit(s, fileLimit()); err != nil {
			return err
		}
		m.Pktgen = probe.Pktgen
		topo, err := topology.Read("/sys")
		if err != nil && s.PinsByName() {
			return fmt.Errorf("placement names need the CPU topology: %w", err)
		}
		m.Topology = topo
		// The workloads' programs run in this process's cgroup: pins keep
		// to its cpuset (hostcpus.Allowed; taskset on cnibench itself does
		// not narrow what they may be pinned to).
		if a, what, err := hostcpus.Allowed(); err == nil {
			m.Allowed, m.AllowedWhy = a, "the CPUs this cnibench process's workloads may be pinned to: "+what
		}
		mtu := s.Spec.Nodes.UnderlayMTU
		for _, sd := range s.Spec.Datapaths {
			d := p.datapaths[sd.Name].Built // built once, in needs
			pod := d.MTU(mtu)
			host := datapath.IsHostNetwork(d)
			if host {
				pod = mtu
			}
			// A datapath that translates Services per packet (cilium's
			// tc programs) serves pktgen's packets too.
			_, perPacket := d.(lbmap.Translator)
			sock := sd.Netfilter != nil && sd.Netfilter.Mode() == study.KubeProxyCilium && !perPacket
			dps = append(dps, workload.Datapath{Name: sd.Name, Type: sd.Type, PodMTU: pod, SocketServices: sock, HostNetwork: host})
		}
	}
	prep, err := workload.Prepare(s.Spec.Workloads, m, dps)
	if err != nil {
		return err
	}
	p.workloads = prep
	p.notes = append(p.notes, prep.Notes...)
	// A cluster's iperf3 is its image's (docs/kubernetes.md).
	n := iperf3.ImageThreadsNote(s.Variants())
	if !facts.Remote {
		n = iperf3.ThreadsNote(envinfo.ToolVersion("iperf3"), s.Variants())
	}
	if n != "" {
		p.notes = append(p.notes, n)
	}
	return nil
}

// taskTool reports whether a tool's trial is a task (spec.Tool.Task), for
// workload.Prepare; an unknown tool is not (study validation named it).
func taskTool(tool string) bool {
	d, err := registry.Lookup(tool)
	return err == nil && d.Describe().Task
}
