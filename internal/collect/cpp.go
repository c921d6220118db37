package collect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/study"
)

// cppEntry's perf runs on the server node's kernel and samples every CPU
// of it (perf record -a): on the local engine that is the machine both
// emulated nodes share, so an inter-node workload's cost is both ends',
// as seed 004's inter-host numbers are; a cluster node's agent samples
// its own node, the receiver alone unless the nodes share a kernel
// (analysis.CPPOneNode notes it beside the paper's numbers).
//
// With background load its pairs' processes (iperf3, the softirqs their
// packets raise) are sampled with the measured ones, on the same node,
// and no sample says which connection it served: divided by the measured
// pods' packets alone, their work raised every component's cost per
// packet, more the more connections. The background servers' devices are
// counted too (cppIfaces), so the cost is per packet of all the traffic
// sampled, which the run notes.
var cppEntry = Entry{
	Name: "cpp",
	Description: "CPU cost per packet by kernel component, from perf samples of every CPU of the server node's kernel " +
		"over the window divided by the measured server pods' packets (with background load, the measured and the background " +
		"server pods' packets: their work is in the samples too): on the local engine the machine both emulated " +
		"nodes share (both ends' cost), on a cluster the server node's agent's (that node alone, unless the nodes share a kernel)",
	Metrics:  []string{"cpp_*_cycles (sampling cycles)", "cpp_*_ns (sampling cpu-clock)"},
	Programs: []string{"perf"},
	Enabled:  func(w study.Workload) bool { return w.CPP },
	New: func(t Trial) (Collector, error) {
		srv := t.Cluster.Server()
		w, err := t.Kernel(srv).CPP(cppIfaces(t), t.PacketProcesses)
		if err != nil {
			return nil, err
		}
		c := &cppCollector{w: w}
		if len(t.PacketProcesses) > 0 {
			c.notes = append(c.notes, cppProcessesNote(t.PacketProcesses))
		}
		if len(t.Background) > 0 {
			c.notes = append(c.notes, cppBackgroundNote)
		}
		return c, nil
	},
}

// cppBackgroundNote says what a cost per packet with background load
// divides.
const cppBackgroundNote = "collector cpp: with background load the cost per packet is of the measured and the background traffic together: " +
	"perf samples the background pairs' processes and softirqs with the measured pairs', and cannot tell them apart, so the packets " +
	"divided are the measured and the background server pods' (a sweep of connections shows how the cost of all the traffic changes, " +
	"not the measured flow's alone)"

// cppProcessesNote says that a datapath's own processes count in its
// cost per packet, and how they are attributed.
func cppProcessesNote(procs []string) string {
	return "collector cpp: the datapath's own per-packet processes (" + strings.Join(procs, ", ") + ") count in the cost per packet " +
		"beside the workload's, attributed by symbol like the workload's (their sockets' kernel work in tcp_udp, copy, ip_stack; " +
		"their TUN device's functions and their own user-space code in other); what cpp_total still leaves out is cpp_excluded_*"
}

// cppIfaces are the devices whose packets a CPU cost per packet divides
// by: the measured server pods' and the background servers', each once
// (on a host-network datapath they are all the node's).
func cppIfaces(t Trial) []netns.Iface {
	srv := t.Cluster.Server()
	out := serverIfaces(t)
	for _, p := range t.Background {
		if ifc := srv.PodIface(p); !slices.Contains(out, ifc) {
			out = append(out, ifc)
		}
	}
	return out
}

type cppCollector struct {
	w     engine.MetricWindow
	notes []string
}

func (c *cppCollector) Start(ctx context.Context) error {
	if err := c.w.Start(ctx); err != nil {
		return fmt.Errorf("cpu cost per packet: %w", err)
	}
	return nil
}

// Stop ends perf's recording, inside every other collector's window.
func (c *cppCollector) Stop(ctx context.Context) (Result, error) {
	if err := c.w.Stop(ctx); err != nil {
		return Result{}, fmt.Errorf("cpu cost per packet: %w", err)
	}
	return Result{}, nil
}

// Finish computes the costs (perf report, on the server node) once every
// window has closed, the CPU sampler's too: the report's seconds at 100%
// of a core are not the trial's.
func (c *cppCollector) Finish(ctx context.Context) (Result, error) {
	m, err := c.w.Metrics(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("cpu cost per packet: %w", err)
	}
	return Result{Metrics: m, Notes: c.notes}, nil
}
