package catalog

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/weave"
)

// podBridges is the Linux bridge each datapath's pods hang off, "" for
// none, as its package wires them: what study validation checks a CNI's
// bridge rules against (weave, kube-router) before anything is built.
// OVS's br0 is no Linux bridge. Changing it is a decision, so it is
// spelled out; TestKernelDatapathNodeIsNodeOf (internal/netfilter)
// checks it against built nodes.
var podBridges = map[string]string{
	"bridge": "cni0", "flannel-vxlan": "cni0", "flannel-udp": "cni0", "geneve": "cni0", "gre": "cni0", "wireguard": "cni0",
	"weave": "weave", "kube-router": "kube-bridge",
	"ovs": "", "cilium": "", "calico-routed": "", "calico-ipip": "", "calico-vxlan": "",
	"host": "", "macvlan": "", "ipvlan": "", "ipvlan-l3": "",
	// implementation flanneld and bird (Variants)
	"bridge/flanneld": "cni0", "flannel-vxlan/flanneld": "cni0", "calico-routed/bird": "", "kube-router/bird": "kube-bridge",
}

// TestPodBridgesAndDevices: every datapath, and every variant another
// implementation builds, says which bridge its pods hang off
// (podBridges) and lists its devices consistently: its bridge and tunnel
// among them, one family (PREFIX+) for its pods' host-side devices
// exactly when its pods have them, and none at all for a datapath whose
// pods have no peer on the node (host network, macvlan, ipvlan children
// made in the pods' namespaces).
func TestPodBridgesAndDevices(t *testing.T) {
	type entry struct {
		key string
		d   datapath.Datapath
	}
	var all []entry
	for _, d := range All() {
		all = append(all, entry{d.Name(), d})
	}
	for _, o := range Variants() {
		d, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, entry{o.Type + "/" + o.Implementation, d})
	}
	for _, e := range all {
		want, ok := podBridges[e.key]
		if !ok {
			t.Errorf("%s: not in podBridges; say which Linux bridge its pods hang off", e.key)
			continue
		}
		d := e.d
		if got := d.PodBridge(); got != want {
			t.Errorf("%s: PodBridge() = %q, want %q", e.key, got, want)
		}
		devs := d.Devices()
		tunnel := d.Tunnel()
		if w, ok := d.(*weave.Datapath); ok && w.Mode == "" {
			// Its tunnel's name is the mode's, picked at preflight (a
			// probe): before, Devices names no tunnel rather than guess.
			tunnel = ""
		}
		for _, dev := range []string{d.PodBridge(), tunnel} {
			if dev != "" && !slices.Contains(devs, dev) {
				t.Errorf("%s: Devices() %v lack %s", e.key, devs, dev)
			}
		}
		var families int
		for _, dev := range devs {
			if strings.HasSuffix(dev, "+") {
				families++
			}
		}
		peerless := datapath.WhyNoPodPeers(d) != ""
		switch {
		case peerless && (len(devs) > 0 || d.PodBridge() != ""):
			t.Errorf("%s: pods without a host-side device, and Devices() %v, PodBridge() %q", e.key, devs, d.PodBridge())
		case !peerless && families != 1:
			t.Errorf("%s: Devices() %v: want one family (PREFIX+) for the pods' host-side devices", e.key, devs)
		}
	}
}
