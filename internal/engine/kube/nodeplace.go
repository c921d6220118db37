package kube

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// IsSelector reports whether a --server-node/--client-node argument is
// a label selector (the defaults, iperf=server and iperf=client): what
// is no node name (a DNS subdomain, as the API server requires of one).
// "zone notin (a)" and a prefixed bare key ("node-role.kubernetes.io/
// worker": nodes that have it) were taken for names and not found; a
// bare key without a prefix reads as a node name.
func IsSelector(s string) bool { return s != "" && len(validation.IsDNS1123Subdomain(s)) > 0 }

// nodeOperators are the node affinity operators of the label selector
// operators: the same matching (NotIn, as !=, matches a node without
// the label).
var nodeOperators = map[selection.Operator]corev1.NodeSelectorOperator{
	selection.Equals: corev1.NodeSelectorOpIn, selection.DoubleEquals: corev1.NodeSelectorOpIn, selection.In: corev1.NodeSelectorOpIn,
	selection.NotEquals: corev1.NodeSelectorOpNotIn, selection.NotIn: corev1.NodeSelectorOpNotIn,
	selection.Exists: corev1.NodeSelectorOpExists, selection.DoesNotExist: corev1.NodeSelectorOpDoesNotExist,
	selection.GreaterThan: corev1.NodeSelectorOpGt, selection.LessThan: corev1.NodeSelectorOpLt,
}

// placeBySelector puts a printed pod on the nodes a label selector
// matches, where a run names the one node the selector matched at its
// preflight (spec.nodeName): a nodeSelector where the selector asks only
// label equalities, else a required node affinity. Printed manifests
// have no cluster to resolve the selector against, and a selector is no
// node name (the API refuses it there).
func placeBySelector(p *corev1.Pod, selector string) error {
	reqs, err := labels.ParseToRequirements(selector)
	if err != nil {
		return fmt.Errorf("node selector %q: %w", selector, err)
	}
	p.Spec.NodeName = ""
	eq := map[string]string{}
	var exprs []corev1.NodeSelectorRequirement
	for _, r := range reqs {
		vals := slices.Sorted(slices.Values(r.ValuesUnsorted()))
		if op := r.Operator(); (op == selection.Equals || op == selection.DoubleEquals) && len(vals) == 1 {
			eq[r.Key()] = vals[0]
		}
		exprs = append(exprs, corev1.NodeSelectorRequirement{Key: r.Key(), Operator: nodeOperators[r.Operator()], Values: vals})
	}
	if len(eq) == len(reqs) {
		p.Spec.NodeSelector = eq
		return nil
	}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}}}}
	return nil
}

// refuseNoExecute refuses a server or client node with a NoExecute taint
// that the run's pods, admitted with tols, do not tolerate. The pods
// name their node (spec.nodeName), which passes the scheduler and so
// any NoSchedule taint, but the kubelet still refuses a pod that does
// not tolerate a NoExecute taint of its node (and the taint manager
// evicts it): the run failed at its first Scale, after its Lease and
// node claims. The pods are not given tolerations for these taints, as
// the agent installed with --agent-nodes is: such a taint may say the
// node is not ready for pods (a CNI's own, Cilium's
// node.cilium.io/agent-not-ready), and the cells would measure that.
// A node condition's taint (node.kubernetes.io/...) is left out: the
// pods tolerate not-ready and unreachable for a while by default, and
// preflight refuses a node that is not Ready; so is a toleration with
// tolerationSeconds, which only delays the eviction.
func refuseNoExecute(place Placement, tols []corev1.Toleration) error {
	for _, side := range []struct {
		role string
		n    *corev1.Node
	}{{"server", place.Server}, {"client", place.Client}} {
		for i := range side.n.Spec.Taints {
			t := &side.n.Spec.Taints[i]
			if t.Effect != corev1.TaintEffectNoExecute || strings.HasPrefix(t.Key, "node.kubernetes.io/") ||
				slices.ContainsFunc(tols, func(tol corev1.Toleration) bool { return tol.TolerationSeconds == nil && tol.ToleratesTaint(t) }) {
				continue
			}
			return fmt.Errorf("%w: %s node %s has the taint %s: the kubelet refuses a pod that does not tolerate a NoExecute taint, though it names "+
				"its node as the run's pods do (NoSchedule taints do not matter), and they tolerate none, as one may say the node is not ready for pods; "+
				"remove it while the run lasts (`kubectl taint nodes %s %s-`) or choose another --%s-node",
				ErrNoExecute, side.role, side.n.Name, t.ToString(), side.n.Name, t.ToString(), side.role)
		}
	}
	return nil
}
