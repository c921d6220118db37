package study

// Pods per node: what a workload variant needs on a node, bounded before
// any node is built.

import (
	"fmt"

	"github.com/cnibench/cnibench/internal/results"
)

// PodsPerNode is the number of pods per node a variant needs at r
// replicas: r measured pairs and its background pairs, twice over when
// client and server share the server node (intra-node). The runner
// scales the cluster to it (runner.place); validation bounds it by
// MaxPodsPerNode before the host is touched.
func (w Workload) PodsPerNode(r int) int {
	m := 0
	if w.Background != nil && w.BackgroundConnections() > 0 {
		m = w.Background.Pairs
	}
	if w.IntraNode() {
		return 2*r + 2*m
	}
	return r + m
}

// checkPodsPerNode refuses a workload whose variants need more pods per
// node than a node holds at a replica count the run measures them at:
// the engine would refuse it only after the nodes are built. Replica
// counts and background pairs out of range are reported by their own
// checks. A task tool's burst (podstartup's pods, or concurrency when
// pods is unset) starts its pods on the server node beside the pods the
// cluster was scaled to for that datapath and replica count, which is the
// most any variant measured there needs (runner.atReplicas). Both follow
// spec.only as the runner does (Study.Cells): a variant, or pods, only an
// unpicked cell would need are not built, so they refuse nothing. Each
// workload is refused once, at its largest count.
func checkPodsPerNode(s *Study, cat Catalog, bad badFunc) {
	if s.Plan().Cells > MaxCells {
		return // checkPlanned refuses it; its cells could take gigabytes to list
	}
	type at struct {
		datapath string
		r        int
	}
	index := map[string]int{} // variant name: its workload's index
	byName := map[string]Workload{}
	for i, w := range s.Spec.Workloads {
		for _, v := range w.Variants() {
			index[v.Name], byName[v.Name] = i, v
		}
	}
	var measured []results.Cell
	node, nodeOf := map[at]int{}, map[at]string{}
	worst := map[int]podsProblem{} // per workload: its largest refusal
	for _, c := range s.Cells() {
		v, ok := byName[c.Workload]
		if !ok || c.Replicas < 1 || c.Replicas > MaxReplicas || v.Background != nil && (v.Background.Pairs < 1 || v.Background.Pairs > MaxReplicas-1) {
			continue
		}
		measured = append(measured, c)
		k, n := at{c.Datapath, c.Replicas}, v.PodsPerNode(c.Replicas)
		node[k] = max(node[k], c.Replicas)
		if n > node[k] {
			node[k], nodeOf[k] = n, v.Name
		}
		if i := index[v.Name]; n > MaxPodsPerNode && n > worst[i].pods {
			worst[i] = podsProblem{n, fmt.Sprintf("%s needs %d pods per node at %d replicas (%s); a node holds at most %d",
				v.Name, n, c.Replicas, podsWhy(v), MaxPodsPerNode)}
		}
	}
	for _, c := range measured {
		v, k := byName[c.Workload], at{c.Datapath, c.Replicas}
		burst, i := v.BurstPods(), index[v.Name]
		if t, ok := cat.Tool(v.Tool); !ok || !t.Task || burst < 1 || burst > MaxPodsPerNode {
			continue // a burst out of range is the option's bound's to report
		}
		if total := node[k] + burst; total > MaxPodsPerNode && total > worst[i].pods {
			why := fmt.Sprintf("which runs %d at %d replicas", node[k], c.Replicas)
			if nodeOf[k] != "" {
				why += fmt.Sprintf(" (%s's)", nodeOf[k])
			}
			worst[i] = podsProblem{total, fmt.Sprintf("%s starts %d pods on the server node, %s: %d pods; a node holds at most %d",
				v.Name, burst, why, total, MaxPodsPerNode)}
		}
	}
	for i := range s.Spec.Workloads {
		if p, ok := worst[i]; ok {
			bad(fmt.Sprintf("spec.workloads[%d]", i), "%s", p.msg)
		}
	}
}

// podsProblem is a workload's refusal for pods per node: how many it
// would put on the node, and why.
type podsProblem struct {
	pods int
	msg  string
}

// BurstPods is how many pods a variant of a task tool (podstartup) starts
// in one trial: pods, or its concurrency when pods is unset.
func (w Workload) BurstPods() int {
	if w.Pods > 0 {
		return w.Pods
	}
	return w.Concurrent()
}

// podsWhy says what a variant's pod count is made of.
func podsWhy(w Workload) string {
	why := "one server and one client pod per pair"
	if w.IntraNode() {
		why = "intra-node: both ends of each pair on the server node"
	}
	if w.Background != nil && w.BackgroundConnections() > 0 {
		why += fmt.Sprintf(", plus %d background pairs", w.Background.Pairs)
	}
	return why
}
