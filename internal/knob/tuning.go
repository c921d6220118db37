package knob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// tuningEntry applies the cell's tuning (RPS masks, RFS tables, network
// sysctls, idle states) to the server node and its measured pods, or with side:
// client or both to the client end's too. tune.Apply journals every old
// value before it writes, and Revert writes them back (package tune).
var tuningEntry = Entry{
	Name: "tuning",
	Changes: "RPS masks and RFS flow tables of the server node's underlay, tunnel and measured pods' devices " +
		"(the underlay only with devices: underlay), the host's net.core.rps_sock_flow_entries, and the tuning's " +
		"sysctls (global ones on the host, per-namespace ones in the server node's namespace and with pods: true " +
		"its measured pods'), and with cpuIdle the idle latency limit of the server node's CPUs; " +
		"with side: client or both the same at the client node and the measured clients: the cell's tuning",
	Scope: Trial,
	// Every cell has a tuning; baseline's writes nothing.
	Wanted: func(*Target) bool { return true },
	Needs: func(t *Target) []string {
		var f []string
		if t.Tuning.RPS != nil {
			f = append(f, probe.RPS)
		}
		if t.Tuning.RFS != nil {
			f = append(f, probe.RFS)
		}
		for _, name := range slices.Sorted(maps.Keys(t.Tuning.Sysctls)) {
			f = append(f, probe.Sysctl(name))
			// A value a module provides (default_qdisc: fq, sch_fq)
			// is refused where the kernel has none, at every trial.
			// A local node is a namespace other than the host's, and so
			// are pods (pods: true); a cluster node's agent writes in
			// the host's.
			if v := probe.SysctlValue(name, t.Tuning.Sysctls[name], t.Local || t.Tuning.Pods); v != "" {
				f = append(f, v)
			}
		}
		if t.Tuning.CPUIdle != nil {
			f = append(f, probe.CPUIdle)
		}
		return f
	},
	Apply:    applyTuning,
	HashCPUs: tuningHashCPUs,
}

// tuningHashCPUs is how many CPUs the tuning's RPS mask spreads flows
// over by their hash: the larger of its ends' masks (an end the tuning
// does not steer counts nothing). A tuning with RFS places none so, RPS
// mask or not: RFS steers a flow to the CPU its reader last ran on
// (rps_sock_flow_table, consulted before the hash), which the scheduler
// picks per trial too, but the receive work then runs beside the reader
// wherever that is, and the trials show it: at 1 pair the per-round
// log-ratios of rfs and rfs+ against the baseline spread 6-10%, those
// of rps and rps+ 19-24%, in two values (docs/statistics.md, the
// 2026-11-29 run at the paper's trial length). A mask of one CPU places every flow on it, the
// same CPU every trial: it counts as 1, which holds nothing.
func tuningHashCPUs(t *Target) int {
	if t.Tuning.RPS == nil || t.Tuning.RFS != nil {
		return 0
	}
	n := 0
	for _, side := range t.Tuning.Sides() {
		cpus := t.SteerCPUs
		if side == study.SideClient {
			cpus = t.ClientSteerCPUs
		}
		// The softirq core is left unknown (-1): which core the mask
		// leaves out does not change how many it names.
		if set, err := tune.ResolveCPUs(t.Tuning.RPS.CPUs, tune.Target{CPUs: cpus, SoftIRQCore: -1}); err == nil {
			n = max(n, len(set))
		}
	}
	return n
}

func applyTuning(_ context.Context, t *Target) (Undo, error) {
	t.Tuned = nil
	if t.Tuning.IsBaseline() {
		// Nothing to write: no need to find the devices (an agent call
		// per pod on a cluster) for it.
		return nil, nil
	}
	var undo []func() error
	var earlier []*tune.Applied
	revert := func() error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		return errors.Join(errs...)
	}
	for _, side := range t.Tuning.Sides() {
		node, tgt, err := tuningTarget(t, side)
		if err == nil {
			var applied *tune.Applied
			applied, err = tune.Apply(t.Journal, t.FS(node), t.Tuning, tgt)
			if err == nil {
				// The host's values the server side set too, the
				// client side found already written: recorded once,
				// with what the machine held (Settings' earlier).
				t.Tuned = results.MergeSettings(t.Tuned, applied.Settings(tgt, earlier...))
				earlier = append(earlier, applied)
				undo = append(undo, func() error {
					if err := applied.Revert(); err != nil {
						return fmt.Errorf("revert tuning %s on the %s side: %w", t.Tuning.Name, side, err)
					}
					return nil
				})
				continue
			}
		}
		err = fmt.Errorf("apply tuning %s on the %s side: %w", t.Tuning.Name, side, err)
		// What an earlier side set, or a partial write this side could
		// not undo, leaves the host changed: a RevertError stops the run.
		ue := (*tune.UndoError)(nil)
		if rerr := revert(); rerr != nil || errors.As(err, &ue) {
			return nil, &RevertError{errors.Join(err, rerr)}
		}
		return nil, err
	}
	return revert, nil
}

// tuningTarget is what the cell's tuning goes on at one end of the
// measured pairs: that end's node's underlay, and unless the tuning says
// devices: underlay its tunnel device and the measured pods' host-side
// veths; the pods' own eth0 for a "+" tuning (tune.Plan adds those when
// Tuning.Pods). The server end is the measured servers', the client end
// their clients'.
func tuningTarget(t *Target, side string) (engine.Node, tune.Target, error) {
	node, pods, cpus, softirq := t.Cluster.Server(), t.Measured, t.SteerCPUs, t.SoftIRQCore
	nodeAt, podsAt := results.WhereNode, results.WherePods
	if side == study.SideClient {
		pods, podsAt = t.MeasuredClients, results.WhereClientPods
		// placement: intra-node puts the clients on the server's node,
		// its CPUs and its softirq core.
		if len(pods) == 0 || pods[0].Node() != t.Cluster.Server().Name() {
			node, cpus, softirq = t.Cluster.Client(), t.ClientSteerCPUs, t.ClientSoftIRQCore
			nodeAt = results.WhereClientNode
		}
	}
	tgt := tune.Target{CPUs: cpus, SoftIRQCore: softirq, NodeNetns: node.Netns(), NodeWhere: nodeAt, PodsWhere: podsAt}
	tgt.NodeIfaces = append(tgt.NodeIfaces, engine.ReceiveDevices(node)...)
	if t.Tuning.Devices != study.DevicesUnderlay {
		if tun, ok := node.Tunnel(); ok {
			tgt.NodeIfaces = append(tgt.NodeIfaces, tun)
		}
		veths, err := node.HostVeths(pods)
		if err != nil {
			return nil, tune.Target{}, err
		}
		tgt.NodeIfaces = append(tgt.NodeIfaces, veths...)
	}
	for _, p := range pods {
		tgt.PodIfaces = append(tgt.PodIfaces, node.PodIface(p))
	}
	return node, tgt, nil
}
