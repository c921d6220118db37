// Package kube is the engine that runs studies on a real Kubernetes
// cluster through client-go: server pods (one per replica, each behind a
// Service) on the server node, client pods on the client node, and the
// node agent (package agent, deployed as a DaemonSet limited to those two
// nodes) as the per-node handle for knobs, CPU sampling and environment
// facts.
//
// Design notes:
//
//   - Everything the engine creates carries LabelManagedBy and LabelRun;
//     Close, an error and Ctrl-C delete by that label, and `cnibench
//     cleanup --kube` finds leftovers of dead runs by it.
//   - Workload pods run `cnibench agent pause` and the engine execs the
//     tools in them through the API (pods/exec), wrapped in `cnibench
//     agent exec`, which stops the tool when the exec's stdin closes: an
//     API exec does not kill its process when the stream goes away.
//   - Pod-level knobs (RPS+/RFS+) are written by the agent in the pod's
//     network namespace, which it finds by the CNIBENCH_POD environment
//     variable the engine sets; no pod needs to be privileged and knobs
//     change per trial without restarting pods (the paper used a
//     privileged init step because it tuned once per deployment).
//   - Every check that can fail is made before the first workload pod
//     exists (Preflight, then the agent is deployed and reached).
package kube

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations of every object the engine creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "cnibench"
	LabelRun       = "cnibench.io/run"
	LabelRole      = "cnibench.io/role"
	LabelPod       = "cnibench.io/pod"
	// AnnotationController records who runs the run: "HOST/PID/START",
	// so cleanup can tell a dead controller from a live one.
	AnnotationController = "cnibench.io/controller"
)

// Roles.
const (
	RoleServer = "server"
	RoleClient = "client"
	RoleAgent  = "agent"
	// RoleProbe is the DNS probe pod (dns.go).
	RoleProbe = "probe"
	// RoleLease is the run's Lease (liveness for cleanup).
	RoleLease = "lease"
)

// Defaults.
const (
	DefaultNamespace = "cnibench"
	// DefaultAgentNamespace holds the installed agent: the only
	// namespace Pod Security lets run privileged pods, and one the
	// runner may not create pods in.
	DefaultAgentNamespace = "cnibench-agent"
	// AgentName names the installed agent DaemonSet.
	AgentName = "cnibench-agent"
	// LeaseSeconds is how long a run's Lease stays fresh without a
	// renewal; the runner renews it every LeaseSeconds/3.
	LeaseSeconds          = 30
	DefaultImage          = "docker.io/cnibench/cnibench:dev"
	DefaultServerSelector = "iperf=server"
	DefaultClientSelector = "iperf=client"
	DefaultCNIConfDir     = "/etc/cni/net.d"
	// DefaultTimeout bounds waiting for pods (--pod-timeout).
	DefaultTimeout = 3 * time.Minute
	// BinPath is where the image holds cnibench.
	BinPath = "/usr/local/bin/cnibench"
)

// Config selects the cluster, the nodes and the image.
type Config struct {
	Kubeconfig string
	Context    string
	// Namespace holds the run's workload pods, Services and Lease
	// (Pod Security baseline).
	Namespace string
	// AgentNamespace holds the agent an administrator installed
	// (`cnibench kube install`); the runner only execs there.
	AgentNamespace string
	// ServerNode and ClientNode are node names, or label selectors when
	// they are not a DNS-1123 name (IsSelector).
	ServerNode string
	ClientNode string
	// Image is the workload pods' image: unless ImageGiven, a run
	// takes the installed agent's instead (takeImage), the image whose
	// tools the agent checks and which is on the nodes already.
	Image string
	// ImageGiven says Image was chosen (--image): a run then refuses an
	// agent that runs another image (ErrImageMismatch).
	ImageGiven bool
	PullPolicy corev1.PullPolicy
	// CNIConfDir is the nodes' CNI config directory (mounted read-only
	// into the agent for detection).
	CNIConfDir string
	// RunID names the run; objects are named cnb-RUN-*.
	RunID string
	// Controller is the AnnotationController value.
	Controller string
	// Timeout bounds waiting for pods to become ready.
	Timeout time.Duration
	// Tools are the programs the run execs in the image (the study's
	// workload tools, taskset, perf...); Up checks them through the
	// agent, whose image the workload pods run (takeImage), before any
	// workload pod exists.
	Tools []string
	// Memo, when set, is shared by the preflights of several studies
	// against this cluster (doctor): nil for a run.
	Memo *Memo
}

// WithDefaults fills empty fields.
func (c Config) WithDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.AgentNamespace == "" {
		c.AgentNamespace = DefaultAgentNamespace
	}
	if c.ServerNode == "" {
		c.ServerNode = DefaultServerSelector
	}
	if c.ClientNode == "" {
		c.ClientNode = DefaultClientSelector
	}
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.PullPolicy == "" {
		c.PullPolicy = corev1.PullIfNotPresent
	}
	if c.CNIConfDir == "" {
		c.CNIConfDir = DefaultCNIConfDir
	}
	// Only the zero value is unset: a negative timeout is a mistake
	// Validate refuses, not a request for the default.
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate checks the fields that need no cluster.
func (c Config) Validate() error {
	switch c.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return fmt.Errorf("image pull policy %q: want Always, IfNotPresent or Never", c.PullPolicy)
	}
	if err := checkNamespace("--namespace", c.Namespace); err != nil {
		return err
	}
	if err := checkNamespace("--agent-namespace", c.AgentNamespace); err != nil {
		return err
	}
	// A timeout of nothing would fail every wait at once; Config's own
	// zero is filled by WithDefaults, so this is a value given.
	if c.Timeout <= 0 {
		return fmt.Errorf("--pod-timeout %v: want a positive duration (default %v)", c.Timeout, DefaultTimeout)
	}
	if c.Namespace != "" && c.Namespace == c.AgentNamespace {
		return fmt.Errorf("%w: --namespace and --agent-namespace are both %q: workload pods run apart from the privileged agent", ErrBadNamespace, c.Namespace)
	}
	if c.RunID != "" && strings.ContainsAny(c.RunID, "-_.") {
		return fmt.Errorf("run ID %q: want lower-case letters and digits", c.RunID)
	}
	return nil
}

// ErrBadNamespace is a namespace a run may not use.
var ErrBadNamespace = errors.New("namespace refused")

// checkNamespace refuses `default` and the system namespaces: the
// manifests label their namespace's Pod Security level, and relabelling
// `default` or a `kube-*` namespace would loosen or break what else runs
// there. It refuses a name that is no DNS-1123 label too, which the API
// server would refuse only after an install had begun. Empty is no
// namespace (an install has no run namespace; WithDefaults fills it).
func checkNamespace(flag, ns string) error {
	if ns == "default" || strings.HasPrefix(ns, "kube-") {
		return fmt.Errorf("%w: %s %s: cnibench needs a namespace of its own, not default or kube-*", ErrBadNamespace, flag, ns)
	}
	if ns == "" {
		return nil
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("%w: %s %q: not a namespace name: %s", ErrBadNamespace, flag, ns, strings.Join(errs, "; "))
	}
	return nil
}

// Names of objects.
func leaseName(run string) string         { return "cnb-" + run }
func serverName(run string, i int) string { return fmt.Sprintf("cnb-%s-srv-%d", run, i) }
func clientName(run string, i int) string { return fmt.Sprintf("cnb-%s-cli-%d", run, i) }
func probeName(run string) string         { return "cnb-" + run + "-dns" }
