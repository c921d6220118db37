package study

// Pods per node: what a workload variant needs on a node, bounded before
// any node is built.

import "fmt"

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
// node than a node holds at the study's largest replica count: the
// engine would refuse it only after the nodes are built. Replica counts
// and background pairs out of range are reported by their own checks.
// A task tool's burst (podstartup's pods, or concurrency when pods is
// unset) starts its pods on the server node beside the pods the cluster
// was scaled to for that replica count, which is the most any variant
// needs there (runner.atReplicas; spec.only is not looked at: a burst
// beside pods only an unpicked cell needs is refused too).
func checkPodsPerNode(sp *Spec, cat Catalog, bad badFunc) {
	r := 0
	for _, n := range sp.Replicas {
		if n <= MaxReplicas {
			r = max(r, n)
		}
	}
	node, nodeOf := r, ""
	for i, w := range sp.Workloads {
		for _, v := range w.Variants() {
			if v.Background != nil && (v.Background.Pairs < 1 || v.Background.Pairs > MaxReplicas-1) {
				continue
			}
			n := v.PodsPerNode(r)
			if n > MaxPodsPerNode {
				bad(fmt.Sprintf("spec.workloads[%d]", i), "%s needs %d pods per node at %d replicas (%s); a node holds at most %d",
					v.Name, n, r, podsWhy(v), MaxPodsPerNode)
				break
			}
			if n > node {
				node, nodeOf = n, v.Name
			}
		}
	}
	if r == 0 {
		return
	}
	for i, w := range sp.Workloads {
		if t, ok := cat.Tool(w.Tool); !ok || !t.Task {
			continue
		}
		for _, v := range w.Variants() {
			burst := v.BurstPods()
			if burst < 1 || burst > MaxPodsPerNode || node+burst <= MaxPodsPerNode {
				continue // a burst out of range is the option's bound's to report
			}
			why := fmt.Sprintf("which runs %d at %d replicas", node, r)
			if nodeOf != "" {
				why += fmt.Sprintf(" (%s's)", nodeOf)
			}
			bad(fmt.Sprintf("spec.workloads[%d]", i), "%s starts %d pods on the server node, %s: %d pods; a node holds at most %d",
				v.Name, burst, why, node+burst, MaxPodsPerNode)
			break
		}
	}
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
