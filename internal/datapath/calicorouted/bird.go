package calicorouted

import (
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/birdmesh"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/probe"
)

// KeepDirEnv, set to 1, keeps the BIRD directory (configs, logs,
// control sockets) after the run, for debugging.
const KeepDirEnv = birdmesh.KeepDirEnv

// BIRD is calico-routed with its routes between nodes distributed by a
// real BGP daemon, one BIRD 2 per node in an iBGP full mesh, as
// calico/node does. Pods are wired as by the static datapath. Running
// the BIRDs is package birdmesh's; the configuration (birdconf.go) and
// the routes to wait for are Calico's.
type BIRD struct {
	Datapath
	birdmesh.Mesh
}

// NewBIRD returns calico-routed run by BIRD.
func NewBIRD() *BIRD { return &BIRD{Mesh: birdmesh.Mesh{Label: "calico-routed (bird)"}} }

// Features implements datapath.Datapath: the static datapath's, and BIRD.
func (d *BIRD) Features() []string {
	return append(d.Datapath.Features(), probe.ToolBird)
}

// SetupNode turns on forwarding. The block's blackhole route is left to
// BIRD, as in Calico (its static protocol holds the block; the kernel
// protocol installs it): were it added here too, BIRD would silently
// take over the same route and ConnectNodes could not tell whether BIRD
// had installed it.
// Equivalent to: sysctl net.ipv4.ip_forward=1
func (d *BIRD) SetupNode(n datapath.Node) error {
	if n.Index == 0 {
		// A new cluster: if the engine reuses this value without closing
		// it, stop the previous cluster's daemons first.
		if err := d.Close(); err != nil {
			return err
		}
	}
	return d.Datapath.forwarding(n)
}

// ConnectNodes writes each node's BIRD configuration, starts BIRD in
// every node namespace, and waits until every node's kernel table holds
// what BIRD programs: the blackhole route of its own block and a route
// to each other node's block via that node's underlay address, all
// "proto bird".
// Equivalent to, per node:
//
//	ip netns exec NODE bird -f -c DIR/bird-NODE.conf -s DIR/bird-NODE.ctl -P DIR/bird-NODE.pid
func (d *BIRD) ConnectNodes(nodes []datapath.Node) error {
	return d.Connect(nodes, func(n datapath.Node) (string, error) {
		c, err := newBirdConf(n, nodes)
		if err != nil {
			return "", err
		}
		return c.Render()
	}, func(n datapath.Node) []birdmesh.Route { return wantRoutes(n, nodes) })
}

// wantRoutes lists what BIRD programs on node n of nodes: the blackhole
// of its block, then each other node's block via that node.
func wantRoutes(n datapath.Node, nodes []datapath.Node) []birdmesh.Route {
	want := []birdmesh.Route{{Dst: calicopod.Block(n), Blackhole: true}}
	for _, r := range nodes {
		if r.Name != n.Name {
			want = append(want, birdmesh.Route{Dst: calicopod.Block(r), Gw: r.UnderlayIP, Dev: n.Underlay})
		}
	}
	return want
}

// Close implements datapath.Closer: it stops every BIRD (birdmesh.Mesh.Close).
func (d *BIRD) Close() error { return d.Mesh.Close() }

// Daemons implements datapath.Daemons: one BIRD per node.
func (d *BIRD) Daemons() []datapath.Daemon { return d.Mesh.Daemons() }

var (
	_ datapath.Closer    = (*BIRD)(nil)
	_ datapath.Daemons   = (*BIRD)(nil)
	_ datapath.MTUSetter = (*BIRD)(nil)
	_ datapath.MTUSetter = (*Datapath)(nil)
	_ datapath.Datapath  = (*BIRD)(nil)
)
