package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/cnibench/cnibench/internal/engine"
)

// agentInstalled reports whether the agent's DaemonSet is in its
// namespace. A list the runner may not make (its ClusterRole lists
// DaemonSets of CNI detection's names and the agent's) counts as
// installed: the wait then says what it found.
func (c *Cluster) agentInstalled(ctx context.Context) bool {
	list, err := c.agentDaemonSets(ctx)
	return err != nil || len(list) > 0
}

// agentDaemonSets are the installed agent's DaemonSets (one, normally),
// listed by its name, the one the ClusterRole lets the runner list in
// its namespace (daemonSets says how a name selector is authorized).
func (c *Cluster) agentDaemonSets(ctx context.Context) ([]appsv1.DaemonSet, error) {
	list, err := c.cs.AppsV1().DaemonSets(c.cfg.AgentNamespace).List(ctx,
		metav1.ListOptions{LabelSelector: AgentSelector(), FieldSelector: nameSelector(AgentName)})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// nameSelector selects the objects named name: a list with it is
// authorized as the list of that name, which a rule's resourceNames
// may grant.
func nameSelector(name string) string {
	return fields.OneTermEqualSelector("metadata.name", name).String()
}

// untolerated says which of nodes carries a taint the installed agent's
// DaemonSet does not tolerate ("" for none, or where the DaemonSet or a
// node cannot be read): installed without --agent-nodes it tolerates
// none, so a tainted node (kind's control plane, a benchmark node kept
// free of other work) gets no agent, and the wait would only time out.
// A node condition's taint (node.kubernetes.io/...) is left out: the
// DaemonSet controller tolerates those itself, and they pass.
func (c *Cluster) untolerated(ctx context.Context, nodes []string) string {
	list, err := c.agentDaemonSets(ctx)
	if err != nil || len(list) == 0 {
		return ""
	}
	tols := list[0].Spec.Template.Spec.Tolerations
	for _, name := range nodes {
		n, err := c.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		for _, taint := range n.Spec.Taints {
			if strings.HasPrefix(taint.Key, "node.kubernetes.io/") || taint.Effect == corev1.TaintEffectPreferNoSchedule ||
				slices.ContainsFunc(tols, func(t corev1.Toleration) bool { return t.ToleratesTaint(&taint) }) {
				continue
			}
			return fmt.Sprintf("node %s has the taint %s, which the agent's DaemonSet does not tolerate (installed without --agent-nodes, it tolerates none, "+
				"keeping it off control-plane nodes); an administrator installs it on the benchmark nodes with `cnibench kube install --agent-nodes LABEL=VALUE`, "+
				"which tolerates their taints", name, taint.ToString())
		}
	}
	return ""
}

func (c *Cluster) notInstalled() error {
	return fmt.Errorf("the cnibench agent is not installed: no DaemonSet %s in namespace %s; an administrator installs it once with `cnibench kube install` (docs/kubernetes.md)", AgentName, c.cfg.AgentNamespace)
}

// waitAgents waits until the installed agent's pod on each node is
// running and returns their names by node, after settling the workload
// pods' image against theirs (takeImage). The runner does not deploy
// the agent: an administrator installed it (`cnibench kube install`).
func (c *Cluster) waitAgents(ctx context.Context, nodes ...string) (map[string]string, error) {
	deadline := time.Now().Add(c.cfg.Timeout)
	tainted := false // untolerated taints looked for
	for {
		ready, hasPod, problems, err := c.agentPods(ctx, nodes)
		if err != nil {
			return nil, err
		}
		var missing []string
		for _, n := range nodes {
			if ready[n] == nil {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			err := c.takeImage(ready)
			if err == nil {
				got := map[string]string{}
				for n, p := range ready {
					got[n] = p.Name
				}
				return got, nil
			}
			// Agents of two images are a rollout under way: waited for,
			// and, still so at the deadline, the cluster's state of the
			// moment, not the run's input (exit 1, not 2).
			if !errors.Is(err, errAgentsDiffer) {
				return nil, err
			}
			if time.Now().After(deadline) {
				return nil, engine.Transient(err)
			}
		} else if err := c.agentsMissing(ctx, missing, hasPod, problems, len(ready) == 0, &tainted, deadline); err != nil {
			return nil, err
		}
		if err := sleepCtx(ctx, c.poll); err != nil {
			return nil, err
		}
	}
}

// agentPods are the ready agent pods of nodes by node, which of nodes
// have an agent pod, ready or not, and what keeps those not ready.
func (c *Cluster) agentPods(ctx context.Context, nodes []string) (ready map[string]*corev1.Pod, hasPod map[string]bool, problems []string, err error) {
	list, err := c.cs.CoreV1().Pods(c.cfg.AgentNamespace).List(ctx, metav1.ListOptions{LabelSelector: AgentSelector()})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list agent pods: %w", err)
	}
	ready, hasPod = map[string]*corev1.Pod{}, map[string]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		// Only the wanted nodes' agents: a broken one elsewhere (a
		// node the run does not use) must not fail the run.
		if !slices.Contains(nodes, p.Spec.NodeName) {
			continue
		}
		hasPod[p.Spec.NodeName] = true
		if ok, why := podReady(p); ok {
			ready[p.Spec.NodeName] = p
		} else if why != "" {
			problems = append(problems, fmt.Sprintf("%s on %s: %s", p.Name, p.Spec.NodeName, why))
		}
	}
	return ready, hasPod, problems, nil
}

// agentsMissing is why waiting for the agents of missing (not ready)
// should end now, or nil to wait on: a problem waiting will not fix, no
// agent installed, a taint it does not tolerate (looked for once), the
// deadline passed.
func (c *Cluster) agentsMissing(ctx context.Context, missing []string, hasPod map[string]bool, problems []string, none bool, tainted *bool, deadline time.Time) error {
	if fatal := fatalProblem(problems); fatal != "" {
		err := fmt.Errorf("agent not running on node %s: %s", strings.Join(missing, ", "), fatal)
		if !pullsOnly(problems) {
			return err
		}
		return engine.Transient(fmt.Errorf("%w; its node could not pull the agent's image, which the kubelet tries again with a growing back-off: "+
			"run again once it is pulled (`kubectl -n %s get pods -o wide`; a registry or network outage passes, an image that does not exist does not)",
			err, c.cfg.AgentNamespace))
	}
	if none && len(problems) == 0 && !c.agentInstalled(ctx) {
		// Nothing would ever come: say so now, not after the timeout.
		return fmt.Errorf("agent not running on node %s: %w", strings.Join(missing, ", "), c.notInstalled())
	}
	if !*tainted {
		// Only nodes with no agent pod at all: one scheduled before
		// a taint came, or tolerating it by its namespace's default
		// tolerations, which the template does not show, may come up.
		*tainted = true
		var nopod []string
		for _, n := range missing {
			if !hasPod[n] {
				nopod = append(nopod, n)
			}
		}
		if why := c.untolerated(ctx, nopod); why != "" {
			return fmt.Errorf("agent not running on node %s: %s", strings.Join(missing, ", "), why)
		}
	}
	if time.Now().After(deadline) {
		return c.agentsLate(missing, hasPod, problems)
	}
	return nil
}

// pullsOnly says whether every problem of problems that waiting will not
// fix (fatalProblem) is a failed image pull (ErrImagePull, then
// ImagePullBackOff while the kubelet waits to try again): the agent's
// image has not reached the node yet. The image is the one an
// administrator installed, whose install waited for its pods (an image
// that cannot be pulled at all fails `cnibench kube install`,
// WaitRollout), so a pull failing at a run is likelier a registry or
// the network failing for a while (an agent pod restarted or moved
// with the image gone from the node's cache): the nodes' passing state
// (engine.ErrTransient: exit 1, a run's cells left to a --resume, not
// given up), as agents not ready by the deadline are. A crash loop, an
// image the pull policy forbids pulling or a bad image name stay
// lasting: waiting will not fix them.
func pullsOnly(problems []string) bool {
	pull := false
	for _, p := range problems {
		if fatalProblem([]string{p}) == "" {
			continue
		}
		if !strings.Contains(p, "ErrImagePull") && !strings.Contains(p, "ImagePullBackOff") {
			return false
		}
		pull = true
	}
	return pull
}

// agentsLate is why the agents of missing were not ready by the
// deadline. A node with no agent pod at all is left out by the
// DaemonSet's node selector, which waiting longer will not change: the
// setup's fault (bad input, exit 2). Agent pods that exist but are not
// ready (an image still pulling, a container being created, a slow
// node) are the cluster's state of the moment, which the same command
// may not meet a while later (engine.Transient: exit 1), as agents of
// two images mid-rollout are; they exited 2 before.
func (c *Cluster) agentsLate(missing []string, hasPod map[string]bool, problems []string) error {
	var nopod, unready []string
	for _, n := range missing {
		if hasPod[n] {
			unready = append(unready, n)
		} else {
			nopod = append(nopod, n)
		}
	}
	var why []string
	if len(nopod) > 0 {
		why = append(why, fmt.Sprintf("no cnibench agent pod on node %s in namespace %s; its DaemonSet's node selector must match these nodes (`cnibench kube install --agent-nodes`)",
			strings.Join(nopod, ", "), c.cfg.AgentNamespace))
	}
	if len(unready) > 0 {
		detail := strings.Join(problems, "; ")
		if detail == "" {
			detail = "pending (image pulling, container creating, or node slow)"
		}
		why = append(why, fmt.Sprintf("an agent pod, not ready yet, on node %s: %s; run again once it is ready (`kubectl -n %s get pods -o wide`)",
			strings.Join(unready, ", "), detail, c.cfg.AgentNamespace))
	}
	err := fmt.Errorf("agent not running on node %s after %v: %s", strings.Join(missing, ", "), c.cfg.Timeout, strings.Join(why, "; "))
	if len(nopod) > 0 {
		return err
	}
	return engine.Transient(err)
}
