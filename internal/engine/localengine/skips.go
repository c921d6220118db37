package localengine

import "github.com/cnibench/cnibench/internal/results"

// skips are the datapaths a study skips, grouped by why: cni-compare on
// a machine without iptables skips seven datapaths for the one reason,
// which a note per datapath repeated seven times.
type skips struct {
	why   []string            // reasons, in the order first met
	names map[string][]string // reason -> datapaths
}

func (k *skips) add(name string, err error) {
	if k.names == nil {
		k.names = map[string][]string{}
	}
	why := err.Error()
	if _, ok := k.names[why]; !ok {
		k.why = append(k.why, why)
	}
	k.names[why] = append(k.names[why], name)
}

// notes is one note per reason: "datapath a skipped: why" or
// "datapaths a, b skipped: why".
func (k *skips) notes() []string {
	var out []string
	for _, why := range k.why {
		out = append(out, results.SkipNote(k.names[why], why))
	}
	return out
}
