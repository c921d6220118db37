package catalog

import "github.com/cnibench/cnibench/internal/cnitunnels"

// clusterTunnels are the tunnel devices real CNIs create on a node for the
// datapaths of this catalogue, in the kube engine's order of preference
// (the first one a node has is the node's tunnel device): the lines of
// the table of CNIs' tunnel devices (internal/cnitunnels) that name a
// datapath, in its order. They are the devices' names on a real cluster,
// which the local engine's emulated datapaths need not share. A Device
// is a name or a path.Match pattern, for the names a CNI numbers
// (Flannel's VXLAN device is flannel.<VNI>).
var clusterTunnels = func() []struct{ Datapath, Device string } {
	var out []struct{ Datapath, Device string }
	for _, d := range cnitunnels.List {
		if hasDatapath(d) {
			out = append(out, struct{ Datapath, Device string }{d.Datapath, d.Pattern})
		}
	}
	return out
}()

// hasDatapath keeps the table's lines that stand for a datapath of the
// catalogue: the kube engine's candidates for a node's tunnel device.
func hasDatapath(d cnitunnels.Device) bool { return d.Datapath != "" }

// TunnelDevices lists, in order of preference, the tunnel device names
// (or path.Match patterns) of the catalogue's datapaths on a real cluster
// (the kube engine's).
func TunnelDevices() []string {
	out := make([]string, len(clusterTunnels))
	for i, t := range clusterTunnels {
		out[i] = t.Device
	}
	return out
}

// TunnelDevice is the node's tunnel device among links: the first, in
// the order of TunnelDevices, that one of them matches (of several
// links matching one pattern, the lowest name). ok is false when none
// does.
func TunnelDevice(links []string) (dev string, ok bool) {
	_, dev, ok = cnitunnels.First(links, hasDatapath)
	return dev, ok
}
