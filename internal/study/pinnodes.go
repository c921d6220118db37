package study

import (
	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/topology"
)

// ClientOnServerNode reports whether a workload's client end runs on the
// server node: both ends placed there (intra-node), or the client inside
// the server pod (target: hairpin).
func (w Workload) ClientOnServerNode() bool {
	return w.IntraNode() || w.Target == TargetHairpin
}

// validatePinNodes refuses a pin's CPU list outside the CPUs of the node
// its end runs on (spec.nodes.*.cpus). The local engine starts a node's
// processes on its CPUs, and taskset then moves them to any CPU of the
// cgroup: the end would run on the other node's CPUs, and the report
// would count that CPU as the other node's. Placement names are resolved
// among the node's CPUs at preflight (workload.Prepare), against the
// machine's topology.
func validatePinNodes(w *Workload, f string, n Nodes, bad badFunc) {
	if w.Pin == nil {
		return
	}
	cpus := map[string]string{"server": n.Server.CPUs, "client": n.Client.CPUs}
	clientNode, why := "client", ""
	if w.ClientOnServerNode() {
		clientNode, why = "server", " ("+clientOnServerWhy(w)+")"
	}
	for _, end := range []struct{ side, pin, node, why string }{
		{"server", w.Pin.Server, "server", ""},
		{"client", w.Pin.Client, clientNode, why},
	} {
		if end.pin == "" || cpus[end.node] == "" || topology.IsName(end.pin) {
			continue
		}
		pin, err := cpuset.Parse(end.pin)
		if err != nil {
			continue // validatePin says why
		}
		node, err := cpuset.Parse(cpus[end.node])
		if err != nil {
			continue // validateSchedule says why
		}
		if out := pin.Outside(node); len(out) > 0 {
			bad(f+".pin."+end.side, "%q: the %s runs on the %s node%s, whose CPUs are %s (spec.nodes.%s.cpus); taskset would move it off them onto %s: pin it among %s",
				end.pin, end.side, end.node, end.why, node, end.node, out, node)
		}
	}
}

// clientOnServerWhy says why a workload's client runs on the server node.
func clientOnServerWhy(w *Workload) string {
	if w.IntraNode() {
		return "placement: " + PlacementIntraNode
	}
	return "target: " + TargetHairpin + " runs it in the server pod"
}
