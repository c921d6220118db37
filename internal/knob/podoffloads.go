package knob

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/probe"
)

// podOffloadsEntry sets a datapath entry's podOffloads on every pod's own
// device and on its host-side peer, whenever the pods change. Both live
// in the run's namespaces (the pod's, the node's), which go with the run;
// Undo still puts back each feature it changed, so a pod that outlives a
// replica count is measured at the next one as the knob says, not as the
// last one left it.
var podOffloadsEntry = Entry{
	Name:    "pod-offloads",
	Changes: "offload features (ethtool -K) of every pod's eth0 and its host-side device, the datapath entry's podOffloads",
	Scope:   Pods,
	Wanted:  func(t *Target) bool { return len(t.Datapath.PodOffloads) > 0 },
	Needs:   func(*Target) []string { return []string{probe.ToolEthtool} },
	Apply:   applyPodOffloads,
}

// podDevice is one device the knob sets, with what runs ethtool on it.
type podDevice struct {
	where string
	dev   string
	on    offload.Starter
}

func podDevices(t *Target) ([]podDevice, []string) {
	var out []podDevice
	var notes []string
	for _, side := range []struct {
		node engine.Node
		pods []engine.Pod
	}{{t.Cluster.Server(), t.Servers}, {t.Cluster.Client(), t.Clients}} {
		for _, p := range side.pods {
			out = append(out, podDevice{where: "pod " + p.Name(), dev: side.node.PodIface(p).Name, on: p})
		}
		hv, err := side.node.HostVeths(side.pods)
		if err != nil {
			// MACVLAN and IPVLAN pods have no host-side peer.
			notes = append(notes, fmt.Sprintf("%s: no host-side devices (%v)", side.node.Name(), err))
			continue
		}
		for _, d := range hv {
			out = append(out, podDevice{where: side.node.Name() + "/" + d.Name, dev: d.Name, on: side.node})
		}
	}
	return out, notes
}

func applyPodOffloads(ctx context.Context, t *Target) (Undo, error) {
	devs, notes := podDevices(t)
	var names []string
	for f := range t.Datapath.PodOffloads {
		names = append(names, f)
	}
	sort.Strings(names)
	type change struct {
		d       podDevice
		feature string
		was     bool
	}
	var done []change
	undo := func() error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			c := done[i]
			if err := offload.Set(context.Background(), c.d.on, c.d.dev, c.feature, c.was); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.d.where, err))
			}
		}
		return errors.Join(errs...)
	}
	for _, f := range names {
		on := t.Datapath.PodOffloads[f] == "on"
		set := 0
		for _, d := range devs {
			before := offload.Features(d.on, d.dev)
			if err := offload.Set(ctx, d.on, d.dev, f, on); err != nil {
				notes = append(notes, fmt.Sprintf("%s %s not set on %s: %v", f, state(on), d.where, err))
				continue
			}
			set++
			if was, ok := before[offload.LongName(f)]; ok && was != on {
				done = append(done, change{d, f, was})
			}
		}
		if set == 0 && len(devs) > 0 {
			return undo, fmt.Errorf("datapath %s: pod offload %s %s: no pod device took it (%s)", t.Datapath.Name, f, state(on), strings.Join(notes, "; "))
		}
		t.Env.Offloads = append(t.Env.Offloads, fmt.Sprintf("%s %s on %d pod devices (pods' eth0 and host-side peers)", f, state(on), set))
	}
	t.Env.Offloads = append(t.Env.Offloads, notes...)
	return undo, nil
}

func state(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
