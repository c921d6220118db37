package results

import (
	"cmp"
	"slices"
)

// Where a tuning's write went (TuningSetting.Where).
const (
	// WhereHost is the machine's initial namespace, shared by every
	// emulated node: a global sysctl or the RFS socket table.
	WhereHost = "host"
	// WhereNode is the server node: its devices and namespace (on a
	// cluster node, the node's own, which is also its host's).
	WhereNode = "node"
	// WherePods is each measured server pod's namespace and eth0.
	WherePods = "pods"
	// WhereClientNode and WhereClientPods are the same at the client end
	// (a tuning with side: client or both).
	WhereClientNode = "client-node"
	WhereClientPods = "client-pods"
)

// TuningSetting is one knob a tuning set in one place to one value, as
// the run wrote it: what the report's "What each tuning set" table shows.
type TuningSetting struct {
	Where string `json:"where"`
	// Knob is the file's name: "rps_cpus" and "rps_flow_cnt" of each
	// receive queue, or a sysctl ("net.core.rps_sock_flow_entries").
	Knob  string `json:"knob"`
	Value string `json:"value"`
	// Devices are the devices whose receive queues were written, by
	// name (none for a sysctl).
	Devices []string `json:"devices,omitempty"`
	// Found are the distinct values there before the write (a value
	// already holding Value was left alone and is listed too).
	Found []string `json:"found,omitempty"`
	// Unchanged: every value found already meant Value (a mask by its
	// CPUs), so nothing was written: the tuning changed nothing here.
	Unchanged bool `json:"unchanged,omitempty"`
}

// MergeSettings adds b's settings to a's: one entry per place, knob and
// value, with the union of their devices and found values, unchanged
// while every part was, sorted (host, node, pods, client node, client
// pods; then knob and value). A tuning whose value changed between trials
// (a mask that follows the busiest core) keeps one entry per value.
func MergeSettings(a, b []TuningSetting) []TuningSetting {
	out := slices.Clone(a)
	for _, s := range b {
		i := slices.IndexFunc(out, func(o TuningSetting) bool {
			return o.Where == s.Where && o.Knob == s.Knob && o.Value == s.Value
		})
		if i < 0 {
			out = append(out, TuningSetting{Where: s.Where, Knob: s.Knob, Value: s.Value, Unchanged: true})
			i = len(out) - 1
		}
		out[i].Unchanged = out[i].Unchanged && s.Unchanged
		out[i].Devices = union(out[i].Devices, s.Devices)
		out[i].Found = union(out[i].Found, s.Found)
	}
	slices.SortStableFunc(out, func(x, y TuningSetting) int {
		return cmp.Or(cmp.Compare(whereRank(x.Where), whereRank(y.Where)),
			cmp.Compare(x.Knob, y.Knob), cmp.Compare(x.Value, y.Value))
	})
	return out
}

func whereRank(w string) int {
	return slices.Index([]string{WhereHost, WhereNode, WherePods, WhereClientNode, WhereClientPods}, w)
}

// union is the sorted distinct values of a and b, nil when both are empty.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ChangedNothing reports whether a tuning's record shows no value it
// changed: every place already held what it sets.
func ChangedNothing(set []TuningSetting) bool {
	for _, s := range set {
		if !s.Unchanged {
			return false
		}
	}
	return len(set) > 0
}
