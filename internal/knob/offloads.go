package knob

import (
	"context"
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/offload"
	"github.com/cnibench/cnibench/internal/probe"
)

// offloadsEntry sets a datapath entry's offloads. They live inside the
// run's node namespaces, so deleting the namespaces undoes them.
var offloadsEntry = Entry{
	Name:    "offloads",
	Changes: "offload features (ethtool -K) of every node's underlay and tunnel device, the datapath entry's offloads",
	Scope:   Datapath,
	Wanted:  func(t *Target) bool { return len(t.Datapath.Offloads) > 0 },
	Needs:   func(*Target) []string { return []string{probe.ToolEthtool} },
	Apply: func(ctx context.Context, t *Target) (Undo, error) {
		done, err := applyOffloads(ctx, t)
		t.Env.Offloads = done
		return nil, err
	},
}

// applyOffloads sets the entry's offloads on every node's underlay and
// tunnel device. A device that cannot change a feature (a VXLAN device's
// fixed tunnel segmentation) is noted, not fatal; a feature no device
// could take is an error naming what ethtool said.
func applyOffloads(ctx context.Context, t *Target) ([]string, error) {
	sd, c := t.Datapath, t.Cluster
	var done []string
	for _, f := range sd.OffloadNames() {
		on := sd.OffloadOn(f)
		var ok, failed []string
		for _, n := range []engine.Node{c.Server(), c.Client()} {
			devs := []netns.Iface{n.Underlay()}
			if tu, has := n.Tunnel(); has {
				devs = append(devs, tu)
			}
			for _, d := range devs {
				where := n.Name() + "/" + d.Name
				if err := offload.Set(ctx, n, d.Name, f, on); err != nil {
					failed = append(failed, fmt.Sprintf("%s: %v", where, err))
					continue
				}
				ok = append(ok, where)
			}
		}
		if len(ok) == 0 {
			return nil, fmt.Errorf("datapath %s: offload %s %s: no device took it (%s)", sd.Name, f, sd.Offloads[f], strings.Join(failed, "; "))
		}
		done = append(done, fmt.Sprintf("%s %s on %s", f, sd.Offloads[f], strings.Join(ok, ", ")))
		for _, m := range failed {
			done = append(done, fmt.Sprintf("%s %s not set on %s", f, sd.Offloads[f], m))
		}
	}
	return done, nil
}
