package runner

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
)

// Placement of pods into pairs. The cluster is scaled once per replica
// count to what the hungriest workload variant needs, and every variant
// picks its pairs from the same pods, always in this order, so the
// measured pairs of a plain inter-node workload are exactly those the
// rps-rfs study always used (server pod i -> client pod i):
//
//	inter-node: measured   (srv[i], cli[i])               i < r
//	            background (srv[r+j], cli[r+j])           j < M
//	intra-node: measured   (srv[i], srv[r+i])             i < r
//	            background (srv[2r+2j], srv[2r+2j+1])     j < M
//
// Intra-node clients are pods of the server node, so both ends share the
// node's bridge or routes, as seed 004's intra-host tests do.

// placed is a variant's pairs at one replica count.
type placed struct {
	pairs      []workload.Pair
	background []workload.Pair
	// servers are the measured server pods (tunings apply to them).
	servers []engine.Pod
}

func place(w study.Workload, r int, srv, cli []engine.Pod) (placed, error) {
	need := w.PodsPerNode(r) // bounded by validation
	if len(srv) < need || len(cli) < need {
		return placed{}, fmt.Errorf("workload %s needs %d pods per node, have %d", w.Name, need, min(len(srv), len(cli)))
	}
	var p placed
	m := 0
	if w.Background != nil && w.BackgroundConnections() > 0 {
		m = w.Background.Pairs
	}
	// pair is server pod s (the s-th of its node, listening on the port
	// its Service forwards) with client c.
	pair := func(s int, c engine.Pod) workload.Pair {
		return workload.Pair{Server: srv[s], Client: c, Port: engine.BasePort + s}
	}
	for i := range measuredPairs(w, r) {
		c := cli[i]
		if w.IntraNode() {
			c = srv[r+i]
		}
		p.pairs = append(p.pairs, pair(i, c))
		p.servers = append(p.servers, srv[i])
	}
	for j := range m {
		if w.IntraNode() {
			p.background = append(p.background, pair(2*r+2*j, srv[2*r+2*j+1]))
		} else {
			p.background = append(p.background, pair(r+j, cli[r+j]))
		}
	}
	return p, nil
}

// measuredPairs is how many pairs place measures of w at r replicas:
// one per replica, whatever else the variant places (its background).
// A cell's hold counts its flows from it before the pods exist.
func measuredPairs(_ study.Workload, r int) int { return r }

// backgroundServers are the background pairs' server pods, on the
// server node: the CPU cost per packet counts their packets, whose work
// perf samples with the measured pairs' (collect.Trial.Background).
func (p placed) backgroundServers() []engine.Pod {
	out := make([]engine.Pod, 0, len(p.background))
	for _, b := range p.background {
		out = append(out, b.Server)
	}
	return out
}
