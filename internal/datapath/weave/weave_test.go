package weave

import (
	"testing"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/netns"
)

func TestWeave(t *testing.T) {
	kerneltest.RequireRoot(t)
	for _, mode := range []string{ModeBridge, ModeOVS} {
		t.Run(mode, func(t *testing.T) {
			d := &Datapath{Mode: mode}
			kerneltest.RequireFeatures(t, d)
			if mode == ModeOVS && !haveDpctl() {
				t.Skip("skipped: ovs-dpctl is not installed (apt-get install openvswitch-switch)")
			}
			testWeave(t, d)
		})
	}
}

func testWeave(t *testing.T, d *Datapath) {
	c, servers, clients := dptest.UpPods(t, d, 1500, 2)
	dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
	dptest.TCPEcho(t, clients[1], servers[1], 256<<10)
	dptest.UDPEcho(t, servers[0], clients[0], DefaultMTU-28)
	dptest.UDPEcho(t, clients[1], servers[1], 100)
	dptest.TCPEcho(t, servers[0], servers[1], 64<<10)

	// The extra veth pair sits between the weave bridge and the tunnel.
	h, err := netns.Handle(c.Nodes()[0].Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	br, err := h.LinkByName(Bridge)
	if err != nil {
		t.Fatal(err)
	}
	bv, err := h.LinkByName(BridgeVeth)
	if err != nil {
		t.Fatal(err)
	}
	if bv.Attrs().MasterIndex != br.Attrs().Index {
		t.Errorf("%s is not a port of %s", BridgeVeth, Bridge)
	}
	dv, err := h.LinkByName(DatapathVeth)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := h.LinkByName(DatapathDev)
	if err != nil {
		t.Fatal(err)
	}
	if dv.Attrs().MasterIndex != dp.Attrs().Index {
		t.Errorf("%s is not a port of %s", DatapathVeth, DatapathDev)
	}
	// The mode the run records (env.json's mode) is the one the nodes
	// got: an OVS datapath's local port, or the stand-in bridge, which
	// alone comes with a stand-in note.
	mode, standIn := d.BuiltMode()
	kind := map[string]string{ModeBridge: "bridge", ModeOVS: "openvswitch"}[mode]
	if dp.Type() != kind || (mode == ModeBridge) != (standIn != "") {
		t.Errorf("recorded mode %q (stand-in %q), but %s is of type %s", mode, standIn, DatapathDev, dp.Type())
	}
	t.Logf("mode %s: %s is of type %s", mode, DatapathDev, dp.Type())
	if _, err := h.LinkByName(d.Tunnel()); err != nil {
		t.Errorf("tunnel %s: %v", d.Tunnel(), err)
	}
	// Every pod's port has hairpin on, as Weave's CNI plugin sets it.
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, l := range links {
		if l.Attrs().MasterIndex != br.Attrs().Index || l.Attrs().Name == BridgeVeth {
			continue
		}
		pods++
		if pi, err := h.LinkGetProtinfo(l); err != nil || !pi.Hairpin {
			t.Errorf("pod port %s of %s: hairpin off (%v), want on as Weave's CNI plugin sets it", l.Attrs().Name, Bridge, err)
		}
	}
	if pods == 0 {
		t.Errorf("%s has no pod ports", Bridge)
	}
	for _, name := range []string{Bridge, BridgeVeth, DatapathVeth} {
		l, _ := h.LinkByName(name)
		if l != nil && l.Attrs().MTU != DefaultMTU {
			t.Errorf("%s MTU %d, want %d", name, l.Attrs().MTU, DefaultMTU)
		}
	}
	ph, err := netns.Handle(servers[0].Netns())
	if err != nil {
		t.Fatal(err)
	}
	defer ph.Close()
	eth, err := ph.LinkByName(datapath.PodEth)
	if err != nil {
		t.Fatal(err)
	}
	if eth.Attrs().MTU != DefaultMTU {
		t.Errorf("pod MTU %d, want %d", eth.Attrs().MTU, DefaultMTU)
	}
}
