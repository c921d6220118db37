package knob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/study"
)

// offloadsEntry sets a datapath entry's offloads on every node's underlay
// and tunnel device, or on one of the two (offloadDevices). They live
// inside the run's node namespaces, which go with the run; Undo still
// puts back each feature it changed, so the knob is reverted where it was
// applied, as the package promises.
var offloadsEntry = Entry{
	Name:    "offloads",
	Changes: "offload features (ethtool -K) of every node's underlay and tunnel device (or one of them: offloadDevices), the datapath entry's offloads",
	Scope:   Datapath,
	Wanted:  func(t *Target) bool { return len(t.Datapath.Offloads) > 0 },
	Needs:   func(*Target) []string { return []string{probe.ToolEthtool} },
	Apply: func(ctx context.Context, t *Target) (Undo, error) {
		done, undo, err := applyOffloads(ctx, t)
		t.Env.Offloads = done
		return undo, err
	},
}

// offloadDevs are the devices of node n that d's offloads go on.
func offloadDevs(n engine.Node, d study.Datapath) []netns.Iface {
	var devs []netns.Iface
	if d.OffloadsOnUnderlay() {
		devs = append(devs, n.Underlay())
	}
	if tu, has := n.Tunnel(); has && d.OffloadsOnTunnel() {
		devs = append(devs, tu)
	}
	return devs
}

// nodeChange is one feature the knob turned, with its state before.
type nodeChange struct {
	node    engine.Node
	dev     string
	feature string
	was     bool
}

// applyOffloads sets the entry's offloads on the devices offloadDevs
// names. A device that cannot change a feature (a VXLAN device's fixed
// tunnel segmentation) is noted, not fatal; a feature no device could
// take is an error naming what ethtool said. The returned undo puts back,
// in reverse order, each feature that was changed.
func applyOffloads(ctx context.Context, t *Target) ([]string, Undo, error) {
	sd, c := t.Datapath, t.Cluster
	var changed []nodeChange
	undo := func() error {
		var errs []error
		for i := len(changed) - 1; i >= 0; i-- {
			ch := changed[i]
			if err := offload.Set(context.Background(), ch.node, ch.dev, ch.feature, ch.was); err != nil {
				errs = append(errs, fmt.Errorf("%s/%s: %w", ch.node.Name(), ch.dev, err))
			}
		}
		return errors.Join(errs...)
	}
	var done []string
	for _, f := range sd.OffloadNames() {
		on := sd.OffloadOn(f)
		var ok, failed []string
		for _, n := range []engine.Node{c.Server(), c.Client()} {
			for _, d := range offloadDevs(n, sd) {
				where := n.Name() + "/" + d.Name
				before := offload.Features(n, d.Name)
				if err := offload.Set(ctx, n, d.Name, f, on); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", where, err))
					continue
				}
				ok = append(ok, where)
				if was, known := before[offload.LongName(f)]; known && was != on {
					changed = append(changed, nodeChange{n, d.Name, f, was})
				}
			}
		}
		if len(ok) == 0 {
			return nil, undo, fmt.Errorf("datapath %s: offload %s %s: %s", sd.Name, f, sd.Offloads[f], noDevice(sd, failed))
		}
		done = append(done, fmt.Sprintf("%s %s on %s", f, sd.Offloads[f], strings.Join(ok, ", ")))
		for _, m := range failed {
			done = append(done, fmt.Sprintf("%s %s not set on %s", f, sd.Offloads[f], m))
		}
	}
	return done, undo, nil
}

// noDevice says why no device took a feature: what ethtool said, or
// that the nodes have no device of the kind asked for (validation
// refuses offloadDevices: tunnel on a datapath without a tunnel device,
// so this is a datapath whose tunnel did not come up).
func noDevice(sd study.Datapath, failed []string) string {
	if len(failed) == 0 {
		return fmt.Sprintf("the nodes have no device for offloadDevices %s", sd.OffloadDevices)
	}
	return "no device took it (" + strings.Join(failed, "; ") + ")"
}
