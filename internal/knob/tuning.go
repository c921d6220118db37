package knob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/tune"
)

// tuningEntry applies the cell's tuning (RPS masks, RFS tables, network
// sysctls) to the server node and its measured pods. tune.Apply journals
// every old value before it writes, and Revert writes them back (package
// tune).
var tuningEntry = Entry{
	Name: "tuning",
	Changes: "RPS masks and RFS flow tables of the server node's underlay, tunnel and measured pods' devices " +
		"(the underlay only with devices: underlay), the host's net.core.rps_sock_flow_entries, and the tuning's " +
		"sysctls (global ones on the host, per-namespace ones in the server node's namespace and with pods: true " +
		"its measured pods'): the cell's tuning",
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
		}
		return f
	},
	Apply: applyTuning,
}

func applyTuning(_ context.Context, t *Target) (Undo, error) {
	tgt, err := tuningTarget(t)
	if err != nil {
		return nil, err
	}
	applied, err := tune.Apply(t.Journal, t.FS, t.Tuning, tgt)
	if ue := (*tune.UndoError)(nil); errors.As(err, &ue) {
		return nil, &RevertError{fmt.Errorf("apply tuning %s: %w", t.Tuning.Name, err)}
	}
	if err != nil {
		return nil, fmt.Errorf("apply tuning %s: %w", t.Tuning.Name, err)
	}
	t.Tuned = applied.Settings(tgt)
	return func() error {
		if err := applied.Revert(); err != nil {
			return fmt.Errorf("revert tuning %s: %w", t.Tuning.Name, err)
		}
		return nil
	}, nil
}

// tuningTarget is what the cell's tuning goes on: the server node's
// underlay, and unless the tuning says devices: underlay its tunnel
// device and the measured pods' host-side veths; the pods' own eth0 for
// a "+" tuning (tune.Plan adds those when Tuning.Pods).
func tuningTarget(t *Target) (tune.Target, error) {
	srv := t.Cluster.Server()
	tgt := tune.Target{CPUs: t.SteerCPUs, SoftIRQCore: t.SoftIRQCore, NodeNetns: srv.Netns()}
	tgt.NodeIfaces = append(tgt.NodeIfaces, srv.Underlay())
	if t.Tuning.Devices != study.DevicesUnderlay {
		if tun, ok := srv.Tunnel(); ok {
			tgt.NodeIfaces = append(tgt.NodeIfaces, tun)
		}
		veths, err := srv.HostVeths(t.Measured)
		if err != nil {
			return tune.Target{}, err
		}
		tgt.NodeIfaces = append(tgt.NodeIfaces, veths...)
	}
	for _, p := range t.Measured {
		tgt.PodIfaces = append(tgt.PodIfaces, srv.PodIface(p))
	}
	return tgt, nil
}
