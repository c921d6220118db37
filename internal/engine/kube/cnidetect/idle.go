package cnidetect

import (
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/cnitunnels"
)

// idleFallback settles the path where the node's only tunnel device of a
// datapath is a module's fallback device (tunl0) that is up but carries
// nothing in the mode detected (Calico with every IPv4 pool's ipipMode
// Never, Flannel's host-gw beside a loaded ipip module): the kube engine
// would otherwise take that device as the node's tunnel, put tunings and
// netem on it and read its zero counters. It sets Routed, which takes
// the tunnel device off the nodes and refuses impairments at it, as on a
// cluster with no tunnel device at all. An unknown CNI may send through
// tunl0 itself: left as it is. Routed, not Evidence, says it: the
// warning the kube engine prints.
func idleFallback(in Input, r *Result) {
	if r.Routed != "" || r.NoTunnel != "" || r.Name == "" || r.Name == "unknown" {
		return
	}
	up := slices.DeleteFunc(slices.Clone(in.Links), func(l string) bool { return slices.Contains(in.Down, l) })
	d, dev, ok := cnitunnels.First(up, func(d cnitunnels.Device) bool { return d.Datapath != "" })
	if !ok || !d.EveryNS || (d.CNI == r.Name && strings.HasPrefix(r.Mode, d.Mode)) {
		return // a CNI's own device, none, or the fallback the mode sends through
	}
	r.Routed = "device " + dev + " is up but " + r.String() + " sends nothing through it, and the node has no other tunnel device: no tunnel device carries the measured packets"
}
