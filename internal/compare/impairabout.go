package compare

import (
	"maps"
	"slices"
	"strings"

	"github.com/cnibench/cnibench/internal/results"
)

// impairmentDifferences lists the impairments both runs recorded
// installing (env.json "impairments") whose netem or place differs: an
// impairment of one name at another place, or with another queue limit
// (raised under one run's link-rate shaper), impairs another thing, and
// compare pairs cells by the name. Devices, nodes and datapath labels are
// left out: they differ between runs of one place (a pod's veth, a
// cluster's labels). A run before the record differs in nothing.
func impairmentDifferences(a, b results.Env) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a.Impairments)) {
		setB, ok := b.Impairments[name]
		if !ok {
			continue
		}
		if x, y := impairmentText(a.Impairments[name]), impairmentText(setB); x != y {
			out = append(out, "impairment "+name+" "+orNone(x)+" / "+orNone(y))
		}
	}
	return out
}

// impairmentText is what a run installed for one impairment, each
// distinct netem at its place once: "loss 5% limit 1000 at client-tunnel
// egress".
func impairmentText(set []results.ImpairmentSetting) string {
	var parts []string
	for _, s := range set {
		parts = append(parts, s.Netem+" at "+s.Where+" "+s.Direction)
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), ", ")
}
