package catalog

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/cnibench/cnibench/internal/cniconf"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/probe"
)

// TestCatalog checks what every datapath promises without touching the
// kernel: a unique name that Lookup finds, at least one kernel feature
// known to the probe, and an MTU that fits the underlay.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		name := d.Name()
		if seen[name] {
			t.Errorf("datapath %s listed twice", name)
		}
		seen[name] = true
		if got, err := Lookup(name); err != nil || got.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, got, err)
		}
		var kernel int
		for _, f := range d.Features() {
			if slices.Contains(probe.KernelFeatures(), f) {
				kernel++
			}
		}
		if kernel == 0 {
			t.Errorf("%s lists no kernel feature the probe knows: %v", name, d.Features())
		}
		if m := d.MTU(1500); m < 1280 || m > 1500 {
			t.Errorf("%s: MTU(1500) = %d, want 1280..1500", name, m)
		}
		// Some CNIs follow the underlay, some (Weave) keep a fixed MTU;
		// none may exceed it.
		if m := d.MTU(9000); m > 9000 || m < d.MTU(1500) {
			t.Errorf("%s: MTU(9000) = %d with MTU(1500) = %d", name, m, d.MTU(1500))
		}
	}
	if _, err := Lookup("no-such-datapath"); err == nil {
		t.Error("Lookup of an unknown name succeeded")
	}
	for _, name := range []string{"host", "bridge", "calico-routed", "calico-ipip", "macvlan", "ipvlan", "ipvlan-l3", "geneve", "gre", "wireguard", "kube-router"} {
		if !seen[name] {
			t.Errorf("datapath %s missing from the catalog", name)
		}
	}
	h, _ := Lookup("host")
	if h == nil || !datapath.IsHostNetwork(h) {
		t.Error("host is not a host-network datapath")
	}
}

// cniDelegates are the datapaths whose real CNI hands pod wiring to a
// reference plugin; every other CNI has its own plugin. Changing this list
// is a decision, so it is spelled out.
var cniDelegates = []string{"bridge", "flannel-vxlan", "flannel-udp", "wireguard", "macvlan", "ipvlan", "ipvlan-l3", "kube-router"}

// needsLease are delegates whose configuration exists only once their
// daemon has leased the node a subnet (SetupNode).
var needsLease = []string{"flannel-udp"}

// TestCNIDelegates checks, without the kernel, what each delegate hands
// the plugins: a configuration list libcni's shape accepts, running only
// plugins it declares (and the probe knows), with the datapath's MTU, for
// each of two nodes.
func TestCNIDelegates(t *testing.T) {
	var got []string
	for _, d := range All() {
		del, ok := d.(datapath.CNIDelegate)
		if !ok {
			continue
		}
		got = append(got, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			for _, p := range del.CNIPlugins() {
				if !slices.Contains(probe.CNIPlugins(), p) {
					t.Errorf("plugin %s is not one the probe looks for", p)
				}
			}
			for i := range 2 {
				n := datapath.Node{Name: fmt.Sprint("node", i), Netns: "cnb-x-node", Index: i, Underlay: "eth1",
					UnderlayIP: net.IPv4(198, 18, 0, byte(i+1)), UnderlayMTU: 1500}
				b, err := del.CNIConfig(n)
				if slices.Contains(needsLease, d.Name()) {
					if err == nil {
						t.Errorf("node %d: a configuration before the node has a lease: %s", i, b)
					}
					continue
				}
				if err != nil {
					t.Fatalf("node %d: %v", i, err)
				}
				types, err := cniconf.Types(b)
				if err != nil {
					t.Fatalf("node %d: %v", i, err)
				}
				for _, typ := range types {
					if !slices.Contains(del.CNIPlugins(), typ) {
						t.Errorf("node %d: the configuration runs %s, which CNIPlugins %v does not name", i, typ, del.CNIPlugins())
					}
				}
				var l struct {
					CNIVersion string `json:"cniVersion"`
					Name       string `json:"name"`
					Plugins    []struct {
						MTU    int    `json:"mtu"`
						Bridge string `json:"bridge"`
						IPAM   struct {
							DataDir string `json:"dataDir"`
						} `json:"ipam"`
					} `json:"plugins"`
				}
				if err := json.Unmarshal(b, &l); err != nil {
					t.Fatal(err)
				}
				if l.CNIVersion != cniconf.Version || l.Name == "" {
					t.Errorf("node %d: list %s: want cniVersion %s and a name", i, b, cniconf.Version)
				}
				if m := l.Plugins[0].MTU; m != d.MTU(1500) {
					t.Errorf("node %d: plugin MTU %d, datapath MTU %d", i, m, d.MTU(1500))
				}
				// With wiring cni the plugin makes the bridge: the one
				// study validation checks netfilter rules against.
				if br := l.Plugins[0].Bridge; br != d.PodBridge() {
					t.Errorf("node %d: the plugin puts pods on bridge %q, the datapath says %q", i, br, d.PodBridge())
				}
				if dir := l.Plugins[0].IPAM.DataDir; dir != "" {
					t.Errorf("node %d: the configuration places IPAM state at %s; that is the engine's job", i, dir)
				}
			}
		})
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(cniDelegates)); !slices.Equal(got, want) {
		t.Errorf("CNI delegates %v, want %v", got, want)
	}
}
