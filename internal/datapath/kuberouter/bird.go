package kuberouter

import (
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/birdmesh"
	"github.com/cnibench/cnibench/internal/probe"
)

// BIRD is kube-router with its routes between nodes learned over BGP
// from a daemon on every node, as kube-router's routing controller does
// with its embedded GoBGP. BIRD 2 stands in for GoBGP: the BGP sessions
// (iBGP full mesh, AS 64512) and the routes they carry are the same, and
// BIRD is a Debian package the project already runs for calico-routed
// (package birdmesh), whereas GoBGP inside kube-router needs the
// Kubernetes API to find its peers. Pods are wired as by the static
// datapath.
type BIRD struct {
	Datapath
	birdmesh.Mesh
}

// NewBIRD returns kube-router with BIRD as the BGP speaker.
func NewBIRD() *BIRD { return &BIRD{Mesh: birdmesh.Mesh{Label: "kube-router (bird)"}} }

// Features implements datapath.Datapath: the static datapath's, and BIRD.
func (d *BIRD) Features() []string { return append(d.Datapath.Features(), probe.ToolBird) }

// SetupNode creates kube-bridge as the static datapath does, after
// stopping the BIRDs of a previous cluster if the engine reuses d.
func (d *BIRD) SetupNode(n datapath.Node) error {
	if n.Index == 0 {
		if err := d.Close(); err != nil {
			return err
		}
	}
	return d.Datapath.SetupNode(n)
}

// ConnectNodes writes each node's BIRD configuration (birdconf.go),
// starts BIRD in every node namespace and waits until every node has,
// from BGP, a route to each other node's pod CIDR via that node.
// Equivalent to, per node:
//
//	ip netns exec NODE bird -f -c DIR/bird-NODE.conf -s DIR/bird-NODE.ctl -P DIR/bird-NODE.pid
//
// and then, on every node: PEER_CIDR via PEER_UNDERLAY_IP dev eth1 proto bird
func (d *BIRD) ConnectNodes(nodes []datapath.Node) error {
	return d.Connect(nodes, func(n datapath.Node) (string, error) {
		c, err := newBirdConf(n, nodes)
		if err != nil {
			return "", err
		}
		return c.Render()
	}, func(n datapath.Node) []birdmesh.Route { return wantRoutes(n, nodes) })
}

// wantRoutes lists the routes BIRD programs on node n: each other node's
// pod CIDR via that node's underlay address.
func wantRoutes(n datapath.Node, nodes []datapath.Node) []birdmesh.Route {
	var want []birdmesh.Route
	for _, r := range nodes {
		if r.Name != n.Name {
			want = append(want, birdmesh.Route{Dst: PodCIDR(r), Gw: r.UnderlayIP, Dev: n.Underlay})
		}
	}
	return want
}

// Close implements datapath.Closer: it stops every BIRD.
func (d *BIRD) Close() error { return d.Mesh.Close() }

// Daemons implements datapath.Daemons: one BIRD per node.
func (d *BIRD) Daemons() []datapath.Daemon { return d.Mesh.Daemons() }

var (
	_ datapath.Closer      = (*BIRD)(nil)
	_ datapath.Daemons     = (*BIRD)(nil)
	_ datapath.MTUSetter   = (*BIRD)(nil)
	_ datapath.Datapath    = (*BIRD)(nil)
	_ datapath.CNIDelegate = (*BIRD)(nil)
)
