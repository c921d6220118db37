package results

import (
	"cmp"
	"slices"
)

// ImpairmentSetting is the netem one impairment installed at one place
// of one datapath's cells, as the trials applied it: what the report's
// line per impairment shows.
type ImpairmentSetting struct {
	Datapath string `json:"datapath"`
	// Where and Direction are spec.impairAt's: the device the study
	// named (client-tunnel, server-tunnel, underlay, client-pods) and
	// egress or ingress (through an ifb).
	Where     string `json:"where"`
	Direction string `json:"direction"`
	// Node is the node of the devices.
	Node string `json:"node,omitempty"`
	// Devices are where the netem sat, by name (an ifb for ingress).
	Devices []string `json:"devices"`
	// Netem is the netem as installed, in tc's syntax, its queue limit
	// included: the impairment's own, tc's default 1000, or the one
	// cnibench set under the link-rate shaper.
	Netem string `json:"netem"`
	// LimitRaised: that limit is cnibench's, set because the impairment
	// gave none and netem took the place of the shaper's queue.
	LimitRaised bool `json:"limit_raised,omitempty"`
}

// MergeImpairments adds b's settings to a's: one entry per datapath,
// place, node and netem, with the union of their devices (a client-pods
// impairment's veths differ with the replica count), sorted by datapath,
// then netem.
func MergeImpairments(a, b []ImpairmentSetting) []ImpairmentSetting {
	out := slices.Clone(a)
	for _, s := range b {
		i := slices.IndexFunc(out, func(o ImpairmentSetting) bool {
			return o.Datapath == s.Datapath && o.Where == s.Where && o.Direction == s.Direction && o.Node == s.Node && o.Netem == s.Netem
		})
		if i < 0 {
			out = append(out, ImpairmentSetting{Datapath: s.Datapath, Where: s.Where, Direction: s.Direction, Node: s.Node, Netem: s.Netem})
			i = len(out) - 1
		}
		out[i].LimitRaised = out[i].LimitRaised || s.LimitRaised
		out[i].Devices = union(out[i].Devices, s.Devices)
	}
	slices.SortStableFunc(out, func(x, y ImpairmentSetting) int {
		return cmp.Or(cmp.Compare(x.Datapath, y.Datapath), cmp.Compare(x.Netem, y.Netem))
	})
	return out
}
