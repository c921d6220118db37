package cnidetect

import (
	"encoding/json"
	"path"
	"slices"
	"sort"
	"strings"
)

// skip is primaryOf's next for a meta-plugin's file that names no
// network of its own: the runtime's network is the next file's.
const skip = "\x00skip"

// confNames are the config files' names the runtime reads, in its order.
func confNames(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".conf") || strings.HasSuffix(n, ".conflist") || strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// netConf is what detection reads of a CNI config: a .conf's type, a
// .conflist's plugins, and Multus's delegates and clusterNetwork.
type netConf struct {
	Type    string `json:"type"`
	Plugins []struct {
		Type string `json:"type"`
	} `json:"plugins"`
	Delegates      []json.RawMessage `json:"delegates"`
	ClusterNetwork string            `json:"clusterNetwork"`
}

func (c netConf) types() []string {
	var out []string
	if c.Type != "" {
		out = append(out, c.Type)
	}
	for _, p := range c.Plugins {
		out = append(out, p.Type)
	}
	return out
}

// primaryOf returns the plugin types of config file name, the primary
// (the pod's wiring) first. Multus (multus, multus-shim) wires no pod:
// its first delegate does, or the file its clusterNetwork names (next),
// or, naming neither (the thick plugin's shim), the next file (skip).
func primaryOf(files map[string]string, name string) (types []string, next string) {
	var c netConf
	if json.Unmarshal([]byte(files[name]), &c) != nil {
		return nil, ""
	}
	types = c.types()
	if len(types) == 0 || !strings.HasPrefix(types[0], "multus") {
		return types, ""
	}
	if len(c.Delegates) > 0 {
		var d netConf
		if json.Unmarshal(c.Delegates[0], &d) == nil && len(d.types()) > 0 {
			return append(d.types(), types...), ""
		}
	}
	if b := path.Base(c.ClusterNetwork); c.ClusterNetwork != "" && len(confNames(map[string]string{b: ""})) == 1 && b != name {
		return types, b
	}
	return types, skip
}

// hint is a CNI detection does not know, told by its DaemonSet or device.
type hint struct{ name, cni string }

// hintDaemonSets and hintDevices suggest the CNI a config file of a
// plugin detection does not know belongs to: evidence for a reader, not
// a detection (the run stays "unknown").
var (
	hintDaemonSets = []hint{{"antrea-agent", "antrea"}, {"ovnkube-node", "ovn-kubernetes"}, {"aws-node", "aws vpc cni"},
		{"azure-cns", "azure cni"}, {"azure-ip-masq-agent", "azure cni"}, {"kube-ovn-cni", "kube-ovn"}}
	hintDevices = []hint{{"antrea-gw0", "antrea"}, {"genev_sys_6081", "an ovs geneve overlay (antrea, ovn-kubernetes)"},
		{"vxlan_sys_4789", "an ovs vxlan overlay"}, {"ovn-k8s-mp0", "ovn-kubernetes"}, {"br-int", "an ovs integration bridge"},
		{"azure0", "azure cni"}, {"azv*", "azure cni"}, {"eni*", "aws vpc cni"}}
)

// hints adds, as evidence, the DaemonSets and devices of in that suggest
// which unknown CNI runs, and the DaemonSets of the CNIs detection knows,
// which run beside it (a policy add-on), except chained's: the CNI
// chained after the config's plugin, on the pods' path (Cilium's
// chaining), whose DaemonSet is named as such.
func hints(in Input, ev func(string), chained string) {
	for _, d := range in.DaemonSets {
		c, ok := cniDaemonSets[d.Name]
		if i := slices.IndexFunc(hintDaemonSets, func(h hint) bool { return h.name == d.Name }); i >= 0 {
			ev("daemonset " + d.Namespace + "/" + d.Name + " suggests " + hintDaemonSets[i].cni)
		} else if ok && c == chained && chained != "" {
			ev("daemonset " + d.Namespace + "/" + d.Name + " (" + c + ", chained after the config's first plugin)")
		} else if ok {
			ev("daemonset " + d.Namespace + "/" + d.Name + " (" + c + ", beside the config's plugin: a policy add-on, not the pods' network)")
		}
	}
	for _, h := range hintDevices {
		for _, l := range slices.Sorted(slices.Values(in.Links)) {
			if ok, _ := path.Match(h.name, l); ok {
				ev("device " + l + " suggests " + h.cni)
				break
			}
		}
	}
}
