package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Sentinel errors of Preflight, for callers and tests that branch.
var (
	ErrUnreachable  = errors.New("cluster unreachable")
	ErrForbidden    = errors.New("missing permission")
	ErrNoNode       = errors.New("node not found")
	ErrNoNamespace  = errors.New("namespace not found")
	ErrNodeNotReady = errors.New("node not ready")
	// ErrImageTools: the image lacks a program the study runs.
	ErrImageTools = errors.New("image lacks tools")
	// ErrAdmission: the namespace's admission (Pod Security, a
	// ResourceQuota, a policy engine) refuses the run's pods or Services.
	ErrAdmission = errors.New("refused by admission")
	// ErrNoExecute: a node the run uses has a NoExecute taint its pods
	// do not tolerate (refuseNoExecute).
	ErrNoExecute = errors.New("node taint refuses the run's pods")
)

// Placement is where a run's pods go.
type Placement struct {
	Server, Client *corev1.Node
	// Notes are what preflight found that costs the run a clue, not the
	// run: optional rights the caller lacks (optionalPermissions).
	Notes []string
	// SharedKernels are, by boot ID, the nodes of the cluster that share
	// a kernel with the server or client node (sharedKernels): the kernels
	// the run claims (kernelsOf).
	SharedKernels map[string][]string
}

// permission is one access the engine needs.
type permission struct {
	group, resource, sub, verb string
	name                       string // the one object, where the rule names it
	cluster                    bool
	agent                      bool // in the agent's namespace
}

func (p permission) String() string {
	r := p.resource
	if p.sub != "" {
		r += "/" + p.sub
	}
	if p.group != "" {
		r += "." + p.group
	}
	if p.name != "" {
		r += " named " + p.name
	}
	return p.verb + " " + r
}

// where is where cfg's run needs p, in words.
func (p permission) where(cfg Config) string {
	switch {
	case p.cluster:
		return "cluster-wide"
	case p.agent:
		return "in namespace " + cfg.AgentNamespace
	}
	return "in namespace " + cfg.Namespace
}

// permissions are what a run needs, each checked at preflight; the
// Roles of `kube manifests --rbac` grant these and, named in
// TestPreflightAndRolesAgree with why, a few optional reads.
var permissions = []permission{
	{resource: "pods", verb: "create"},
	{resource: "pods", verb: "delete"},
	{resource: "pods", verb: "list"},
	{resource: "pods", verb: "get"},
	{resource: "pods", verb: "watch"}, // the pod start-up burst
	{resource: "pods", sub: "exec", verb: "create"},
	{resource: "services", verb: "create"},
	// The run reads each Service back for its ClusterIP (waitWorkload).
	{resource: "services", verb: "get"},
	{resource: "services", verb: "delete"},
	{resource: "services", verb: "list"},
	{group: "coordination.k8s.io", resource: "leases", verb: "create"},
	// Renewal reads the Lease before it updates it: without get the Lease
	// goes stale, and cleanup would take a live run for a dead one.
	{group: "coordination.k8s.io", resource: "leases", verb: "get"},
	{group: "coordination.k8s.io", resource: "leases", verb: "update"},
	{group: "coordination.k8s.io", resource: "leases", verb: "delete"},
	{group: "coordination.k8s.io", resource: "leases", verb: "list"},
	{resource: "pods", verb: "list", agent: true},
	{resource: "pods", sub: "exec", verb: "create", agent: true},
	{resource: "nodes", verb: "get", cluster: true},
	{resource: "nodes", verb: "list", cluster: true},
}

// kernelPermissions are what a run claiming a shared kernel needs
// besides permissions: its claims (kernellease.go) are Leases in the
// agent's namespace, which every run using the agent sees. Checked only
// where the run's nodes share a kernel (kind, k3d, one machine's test
// cluster): on machines with a kernel each the agents' node locks keep
// runs apart, and RBAC applied before the claims, without these, serves.
var kernelPermissions = []permission{
	{group: "coordination.k8s.io", resource: "leases", verb: "create", agent: true},
	{group: "coordination.k8s.io", resource: "leases", verb: "get", agent: true},
	{group: "coordination.k8s.io", resource: "leases", verb: "update", agent: true},
	{group: "coordination.k8s.io", resource: "leases", verb: "delete", agent: true},
}

// optionalPermissions are CNI detection's reads of the ClusterRole
// (ClusterRole) that preflight checks but a run does without: Calico's
// IPPools and Flannel's net-conf.json tell a CrossSubnet pool or
// DirectRouting between nodes of one subnet (routed natively) from an
// overlay. RBAC applied before the ClusterRole granted them lacks them;
// such a run is noted, not refused (optionalNote).
func optionalPermissions() []permission {
	var out []permission
	for _, api := range ipPoolAPIs {
		out = append(out, permission{group: api.group, resource: "ippools", verb: "list", cluster: true})
	}
	for _, n := range flannelConfigMapNames() {
		out = append(out, permission{resource: "configmaps", verb: "get", name: n, cluster: true})
	}
	return out
}

// optionalNote says what the optional rights missing cost the run.
func optionalNote(missing []string) string {
	return "the runner may not " + strings.Join(missing, "; ") + ": CNI detection cannot read Calico's IP pools or Flannel's " +
		"net-conf.json, so between nodes of one subnet, where the measured path is routed, not tunnelled, a Calico CrossSubnet " +
		"pool is only warned of, not resolved, and Flannel's DirectRouting goes unseen (re-apply `cnibench kube manifests --rbac`, " +
		"whose ClusterRole grants them)"
}

// checkPermissions asks the API server, one SelfSubjectAccessReview each,
// whether the caller holds permissions (an error naming those it lacks)
// and optionalPermissions (a note naming those it lacks, "" when none).
func checkPermissions(ctx context.Context, cs kubernetes.Interface, cfg Config) (string, error) {
	var missing, optional []string
	for _, p := range append(slices.Clone(permissions), optionalPermissions()...) {
		ok, err := allowed(ctx, cs, cfg, p)
		if err != nil {
			return "", err
		}
		switch {
		case ok:
		case slices.Contains(permissions, p):
			missing = append(missing, p.String()+" "+p.where(cfg))
		default:
			optional = append(optional, p.String()+" "+p.where(cfg))
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: %s (grant the Role and ClusterRole printed by `cnibench kube manifests --rbac`)",
			ErrForbidden, strings.Join(missing, "; "))
	}
	if len(optional) > 0 {
		return optionalNote(optional), nil
	}
	return "", nil
}

// allowed asks the API server, in a SelfSubjectAccessReview, whether the
// caller holds p where cfg's run needs it.
func allowed(ctx context.Context, cs kubernetes.Interface, cfg Config, p permission) (bool, error) {
	ra := &authv1.ResourceAttributes{Group: p.group, Resource: p.resource, Subresource: p.sub, Verb: p.verb, Name: p.name}
	switch {
	case p.agent:
		ra.Namespace = cfg.AgentNamespace
	case !p.cluster:
		ra.Namespace = cfg.Namespace
	}
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
		&authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra}}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("%w: access review: %w", ErrUnreachable, err)
	}
	return r.Status.Allowed, nil
}

// checkKernelPermissions checks kernelPermissions for a run whose nodes
// share the kernels shared, saying why a run needs them: RBAC applied
// before the claims lacks them, and only a run on such nodes is refused.
func checkKernelPermissions(ctx context.Context, cs kubernetes.Interface, cfg Config, shared map[string][]string) error {
	var missing []string
	for _, p := range kernelPermissions {
		ok, err := allowed(ctx, cs, cfg, p)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, p.String()+" "+p.where(cfg))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s, so the run claims it with a Lease in namespace %s "+
		"(docs/kubernetes.md, \"One run at a time uses a kernel\"): re-apply `cnibench kube manifests --rbac`, whose Role there grants it",
		ErrForbidden, strings.Join(missing, "; "), sharedWords(shared), cfg.AgentNamespace)
}

// Preflight checks, without creating anything, that the cluster answers,
// the namespace exists, the caller may do what a run does (where the
// nodes share a kernel, claim it: kernelPermissions), the server
// and client nodes exist, are distinct and Ready, and the namespace
// admits the run's pods and Services (checkAdmission). Each failure is
// one error that says what to fix; optional rights the caller lacks are
// Placement.Notes.
func Preflight(ctx context.Context, cs kubernetes.Interface, cfg Config) (Placement, error) {
	return preflight(ctx, cs, cfg, true)
}

// preflight is Preflight; workload says the caller creates the run's
// pods and Services, whose admission is then checked, and claims its
// nodes' shared kernels, whose rights are then checked. The advise
// inspection (InspectServer) creates none and claims none, only an exec
// session in the installed agent's pod, so a namespace refusing
// workload pods does not stop it.
func preflight(ctx context.Context, cs kubernetes.Interface, cfg Config, workload bool) (Placement, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Placement{}, err
	}
	if _, err := Ping(ctx, cs, 15*time.Second); err != nil {
		return Placement{}, fmt.Errorf("%w: %w (check --kubeconfig/--context and that the API server is up)", ErrUnreachable, err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, cfg.Namespace, metav1.GetOptions{}); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return Placement{}, fmt.Errorf("%w: %s (create it: `cnibench kube manifests --rbac | kubectl apply -f -`)", ErrNoNamespace, cfg.Namespace)
		case apierrors.IsForbidden(err):
			// Reading namespaces is not needed otherwise; go on.
		default:
			return Placement{}, fmt.Errorf("%w: get namespace %s: %w", ErrUnreachable, cfg.Namespace, err)
		}
	}
	note, err := checkPermissions(ctx, cs, cfg)
	if err != nil {
		return Placement{}, err
	}
	srv, err := findNode(ctx, cs, "server", cfg.ServerNode)
	if err != nil {
		return Placement{}, err
	}
	cli, err := findNode(ctx, cs, "client", cfg.ClientNode)
	if err != nil {
		return Placement{}, err
	}
	if srv.Name == cli.Name {
		return Placement{}, fmt.Errorf("server and client node are both %s: the studies measure traffic between two nodes; choose another --client-node", srv.Name)
	}
	place := Placement{Server: srv, Client: cli}
	// Only a run claims kernels; the advise inspection opens a read-only
	// session and claims none.
	if workload {
		if place.SharedKernels, err = sharedKernels(ctx, cs, place); err != nil {
			return Placement{}, err
		}
		if len(place.SharedKernels) > 0 {
			if err := checkKernelPermissions(ctx, cs, cfg, place.SharedKernels); err != nil {
				return Placement{}, err
			}
		}
		tols, err := checkAdmission(ctx, cs, cfg, srv.Name)
		if err != nil {
			return Placement{}, err
		}
		if err := refuseNoExecute(place, tols); err != nil {
			return Placement{}, err
		}
	}
	if note != "" {
		place.Notes = []string{note}
	}
	return place, nil
}

// checkAdmission has the API server admit, as a server-side dry run
// (every admission step runs, nothing is stored), a server pod and its
// Service as the run makes them (its client pods share the pod's spec).
// Without it a namespace whose Pod Security is restricted, whose
// ResourceQuota requires limits, or whose policies (Gatekeeper, Kyverno)
// refuse these pods failed the run at its first Scale, after its Lease
// and node claims, with exit 1. A webhook that cannot take a dry run
// (side effects) leaves the answer to the run's own create. It returns
// the tolerations the admitted pod has (admission adds some: a
// namespace's defaults), which its node's NoExecute taints are checked
// against (refuseNoExecute); none where the dry run said nothing.
func checkAdmission(ctx context.Context, cs kubernetes.Interface, cfg Config, node string) ([]corev1.Toleration, error) {
	if cfg.RunID == "" {
		cfg.RunID = "preflight" // named as a run's would be; never stored
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	what := "server pod"
	var tols []corev1.Toleration
	pod, err := cs.CoreV1().Pods(cfg.Namespace).Create(ctx, cfg.ServerPod(0, node), dry)
	if err == nil {
		tols = pod.Spec.Tolerations
		what = "Service"
		_, err = cs.CoreV1().Services(cfg.Namespace).Create(ctx, cfg.ServerService(0), dry)
	}
	switch {
	case err == nil, apierrors.IsAlreadyExists(err),
		apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "does not support dry run"):
		return tols, nil
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return nil, fmt.Errorf("%w: namespace %s refuses the run's %s: %w (its pods are unprivileged, with no securityContext and "+
			"no resource requests or limits: the namespace needs Pod Security baseline, not restricted, as `cnibench kube manifests --rbac` "+
			"labels it; no ResourceQuota that requires limits, or a LimitRange that sets them; and no policy (Gatekeeper, Kyverno) "+
			"refusing them: `cnibench kube manifests` prints the objects to check them against)", ErrAdmission, cfg.Namespace, what, err)
	}
	return nil, fmt.Errorf("admission check in namespace %s (a dry-run create of the run's %s): %w", cfg.Namespace, what, err)
}

func findNode(ctx context.Context, cs kubernetes.Interface, role, arg string) (*corev1.Node, error) {
	var n *corev1.Node
	if IsSelector(arg) {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: arg})
		if err != nil {
			return nil, fmt.Errorf("list nodes %s: %w", arg, err)
		}
		switch len(list.Items) {
		case 0:
			return nil, fmt.Errorf("%w: no node has the %s label %s (label one: `kubectl label node NAME %s`, or pass --%s-node NAME)",
				ErrNoNode, role, arg, arg, role)
		case 1:
			n = &list.Items[0]
		default:
			var names []string
			for _, it := range list.Items {
				names = append(names, it.Name)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%s node selector %s matches %d nodes (%s); name one with --%s-node",
				role, arg, len(names), strings.Join(names, ", "), role)
		}
	} else {
		got, err := cs.CoreV1().Nodes().Get(ctx, arg, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s node %q does not exist (see `kubectl get nodes`)", ErrNoNode, role, arg)
		}
		if err != nil {
			return nil, fmt.Errorf("get %s node %s: %w", role, arg, err)
		}
		n = got
	}
	if !nodeReady(n) {
		return nil, fmt.Errorf("%w: %s node %s", ErrNodeNotReady, role, n.Name)
	}
	return n, nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sharedKernel tells, from the boot IDs the kubelets report
// (/proc/sys/kernel/random/boot_id), whether the two nodes run on one
// kernel: nodes of a kind-style cluster on one machine do, and then what
// their agents read of CPUs and memory is one machine's, and the traffic
// between them crosses no NIC.
func sharedKernel(p Placement) (bool, string) {
	a, b := p.Server.Status.NodeInfo.BootID, p.Client.Status.NodeInfo.BootID
	if a == "" || a != b {
		return false, ""
	}
	return true, fmt.Sprintf("the server node %s and the client node %s report one boot ID (%s): they run on one kernel, as "+
		"the nodes of a cluster on one machine (kind-style) do, so the traffic between them crosses no NIC and their CPU %% and "+
		"memory are one machine's", p.Server.Name, p.Client.Name, a)
}

// NodeIP is the node's InternalIP (else its first address).
func NodeIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	if len(n.Status.Addresses) > 0 {
		return n.Status.Addresses[0].Address
	}
	return ""
}

// NodeCPUs is the node's CPU capacity (0 when unknown).
func NodeCPUs(n *corev1.Node) int {
	q, ok := n.Status.Capacity[corev1.ResourceCPU]
	if !ok {
		return 0
	}
	return int(q.Value())
}
