package kube

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/version"
)

// BasePort is the port of server pod 0; pod i listens on BasePort+i
// (engine.BasePort), which its Service forwards.
const BasePort = engine.BasePort

func (c Config) labels(role string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelRun: c.RunID, LabelRole: role}
}

func (c Config) meta(name, role string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: c.labels(role)}
	if c.Controller != "" {
		m.Annotations = map[string]string{AnnotationController: c.Controller}
	}
	return m
}

// Pod Security levels of the two namespaces.
const (
	labelEnforce = "pod-security.kubernetes.io/enforce"
	// LabelVersion on the agent DaemonSet names the cnibench version it
	// runs; the runner's handshake asks the agent itself.
	LabelVersion = "app.kubernetes.io/version"
)

// AgentNamespaceObject is the agent's namespace: Pod Security
// `privileged`, since the agent is.
func (c Config) AgentNamespaceObject() *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: c.AgentNamespace,
		Labels: map[string]string{labelEnforce: "privileged", LabelManagedBy: ManagedBy}}}
}

// WorkloadNamespaceObject is the runs' namespace: Pod Security
// `baseline`, so a pod there cannot be privileged, use the host's
// network, PID namespace or paths, whoever creates it.
func (c Config) WorkloadNamespaceObject() *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: c.Namespace,
		Labels: map[string]string{labelEnforce: "baseline", "pod-security.kubernetes.io/warn": "baseline", LabelManagedBy: ManagedBy}}}
}

// CheckDigest refuses an agent image not pinned by digest: the agent is
// root on every node it runs on, and a tag can be moved to other content
// after the administrator reviewed it.
func CheckDigest(image string) error {
	_, d, ok := strings.Cut(image, "@sha256:")
	if !ok || len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		return fmt.Errorf("agent image %q is not pinned by digest (NAME@sha256:<64 hex>, the digest your registry reports for the pushed image; --allow-tag for a test cluster with imported images)", image)
	}
	return nil
}

// AgentInstall is what an administrator applies once (`cnibench kube
// install`): the agent's namespace and DaemonSet. nodeSelector limits
// the agent to the benchmark nodes (nil: every node).
func (c Config) AgentInstall(nodeSelector map[string]string) []runtime.Object {
	return []runtime.Object{c.AgentNamespaceObject(), c.AgentDaemonSet(nodeSelector)}
}

// agentTolerations are the agent's: every taint where the administrator
// chose its nodes by label (a benchmark node may be tainted to keep other
// work off it), none otherwise, so that a control-plane node's
// NoSchedule taint keeps it off: the agent is root wherever it runs, and
// a runner's exec right in its namespace would be root on the node that
// holds etcd and the cluster's keys. (The DaemonSet controller adds the
// tolerations of a node's transient conditions itself.)
func agentTolerations(nodeSelector map[string]string) []corev1.Toleration {
	if len(nodeSelector) == 0 {
		return nil
	}
	return []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// AgentDaemonSet is the installed node agent: privileged (it writes
// sysfs in other network namespaces), host network (its /sys and
// /proc/sys/net are the node's), host PID (it finds pods' namespaces
// under /proc), /run/cnibench for its journal, and the CNI config
// directory read-only. It needs no API access. Runs reach it by exec
// (`cnibench agent serve --run ID`), one session per run and node.
func (c Config) AgentDaemonSet(nodeSelector map[string]string) *appsv1.DaemonSet {
	labels := map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}
	t := true
	f := false
	grace := int64(30)
	hostDir := corev1.HostPathDirectoryOrCreate
	meta := metav1.ObjectMeta{Name: AgentName, Namespace: c.AgentNamespace,
		Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent, LabelVersion: labelValue(version.Version)}}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: meta,
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:                   true,
					HostPID:                       true,
					DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
					AutomountServiceAccountToken:  &f,
					TerminationGracePeriodSeconds: &grace,
					NodeSelector:                  nodeSelector,
					Tolerations:                   agentTolerations(nodeSelector),
					Containers: []corev1.Container{{
						Name:            "agent",
						Image:           c.Image,
						ImagePullPolicy: c.PullPolicy,
						Command:         []string{BinPath, "agent", "daemon", "--cni-conf-dir", "/host/cni/net.d"},
						SecurityContext: &corev1.SecurityContext{Privileged: &t},
						// Journals are kept per node: nodes of a test cluster
						// may share one machine's /run/cnibench.
						Env: []corev1.EnvVar{{Name: agent.NodeEnv, ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "run", MountPath: "/run/cnibench"},
							{Name: "cni", MountPath: "/host/cni/net.d", ReadOnly: true},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "run", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/run/cnibench", Type: &hostDir}}},
						{Name: "cni", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: c.CNIConfDir, Type: &hostDir}}},
					},
				},
			},
		},
	}
}

// labelValue makes a version a valid label value (63 characters of
// [A-Za-z0-9._-]).
func labelValue(v string) string {
	b := []byte(v)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return strings.Trim(string(b), "._-")
}

// Lease is the run's liveness record: the runner renews it every
// LeaseSeconds/3; `cleanup --kube` takes a run whose Lease was not
// renewed for LeaseSeconds as dead.
func (c Config) Lease(now time.Time) *coordinationv1.Lease {
	d := int32(LeaseSeconds)
	t := metav1.NewMicroTime(now)
	holder := c.Controller
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: c.meta(leaseName(c.RunID), RoleLease),
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, AcquireTime: &t, RenewTime: &t},
	}
}

// workloadPod is a server or client pod pinned to a node. Its main
// process waits; the engine execs the tools in it.
func (c Config) workloadPod(name, role, node string, port int) *corev1.Pod {
	m := c.meta(name, role)
	m.Labels[LabelPod] = name
	grace := int64(5)
	f := false
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: m,
		Spec: corev1.PodSpec{
			NodeName:                      node,
			RestartPolicy:                 corev1.RestartPolicyNever,
			AutomountServiceAccountToken:  &f,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:            "main",
				Image:           c.Image,
				ImagePullPolicy: c.PullPolicy,
				Command:         []string{BinPath, "agent", "pause"},
				Env:             []corev1.EnvVar{{Name: agent.PodEnv, Value: c.Namespace + "/" + name}},
			}},
		},
	}
	if port > 0 {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "iperf3", ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}}
	}
	return p
}

// ServerPod is the iperf3 server pod of pair i.
func (c Config) ServerPod(i int, node string) *corev1.Pod {
	return c.workloadPod(serverName(c.RunID, i), RoleServer, node, BasePort+i)
}

// ClientPod is the iperf3 client pod of pair i.
func (c Config) ClientPod(i int, node string) *corev1.Pod {
	return c.workloadPod(clientName(c.RunID, i), RoleClient, node, 0)
}

// ProbePod is the throw-away pod on the client node from which Up looks
// a name up in cluster DNS: the client pods' spec under its own name and
// role, so its resolv.conf and network are a client pod's.
func (c Config) ProbePod(node string) *corev1.Pod {
	p := c.workloadPod(probeName(c.RunID), RoleProbe, node, 0)
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	return p
}

// ServerService fronts server pod i, as the paper addressed its servers
// (TCP and UDP on the pod's port), and forwards the pod's second TCP
// port (engine.SecondPortOffset: qperf's test socket), which a client
// reaches at the same address as the first.
func (c Config) ServerService(i int) *corev1.Service {
	name := serverName(c.RunID, i)
	port, second := int32(BasePort+i), int32(BasePort+engine.SecondPortOffset+i)
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: c.meta(name, RoleServer),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelRun: c.RunID, LabelPod: name},
			Ports: []corev1.ServicePort{
				{Name: "tcp", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP},
				{Name: "udp", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolUDP},
				{Name: "tcp-second", Port: second, TargetPort: intstr.FromInt32(second), Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

// Role is what the runner may do in the workload namespace: its pods
// (watched for the start-up burst) and Services, exec in the pods, and
// its runs' Leases; no more than preflight checks (permissions), but
// `get` on pods/exec. Pod Security `baseline` there keeps these pods
// unprivileged.
func (c Config) Role() *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench", Namespace: c.Namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "create", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		},
	}
}

// AgentRole is all the runner may do in the agent's namespace: list the
// agent pods and exec in them, and hold its claims of the nodes' kernels
// (Leases there, which every run using the agent sees: kernellease.go).
// Exec is `create` on pods/exec (and `get`, which the WebSocket upgrade
// of older API servers checks); there is no get, create, update or
// delete of pods, DaemonSets or anything else but Leases there.
func (c Config) AgentRole() *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench-agent-exec", Namespace: c.AgentNamespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}},
		},
	}
}

// DNSRole lets the controller see whether cluster DNS runs (its Service
// and EndpointSlices in DNSNamespace), read-only. A run does not need it:
// without it the lookup from a pod decides alone.
func (c Config) DNSRole() *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench-dns", Namespace: DNSNamespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"list"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
		},
	}
}

// ClusterRole is the read-only cluster access: nodes (placement, CPU
// count, addresses), and for CNI detection DaemonSets, Calico's IPPools
// (list, in each group cniclues reads them from) and Flannel's
// net-conf.json ConfigMaps. The DaemonSets and ConfigMaps are granted by
// name: a ClusterRole cannot say a namespace, so `list daemonsets` alone
// would read every DaemonSet's pod template (literal environment
// values, which some operators fill with tokens) and `get configmaps`
// every ConfigMap (applications' settings, sometimes secrets) of every
// namespace. resourceNames limit them to the DaemonSets detection weighs
// (cnidetect.DaemonSetNames) and the agent's own (whose tolerations say
// why a tainted node has no agent: untolerated), listed by name
// (daemonSets, agentDaemonSets), and to the names Flannel, Canal and
// RKE2 give net-conf.json's, in whichever namespace.
func (c Config) ClusterRole() *rbacv1.ClusterRole {
	var poolGroups []string
	for _, api := range ipPoolAPIs {
		poolGroups = append(poolGroups, api.group)
	}
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench-read"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list"}, ResourceNames: daemonSetNames()},
			{APIGroups: poolGroups, Resources: []string{"ippools"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: flannelConfigMapNames()},
		},
	}
}

// RBAC returns the namespaces, Roles, ClusterRole and their bindings for
// subject (a user or "system:serviceaccount:NS:NAME").
func (c Config) RBAC(subject string) []runtime.Object {
	sub := rbacv1.Subject{Kind: rbacv1.UserKind, Name: subject, APIGroup: rbacv1.GroupName}
	if ns, name, ok := serviceAccount(subject); ok {
		sub = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
	}
	return []runtime.Object{
		c.WorkloadNamespaceObject(),
		c.Role(),
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "cnibench", Namespace: c.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cnibench"},
			Subjects:   []rbacv1.Subject{sub},
		},
		// The agent's namespace comes with `kube install`; it is here
		// too so the Role below can be applied first.
		c.AgentNamespaceObject(),
		c.AgentRole(),
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "cnibench-agent-exec", Namespace: c.AgentNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cnibench-agent-exec"},
			Subjects:   []rbacv1.Subject{sub},
		},
		c.DNSRole(),
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "cnibench-dns", Namespace: DNSNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cnibench-dns"},
			Subjects:   []rbacv1.Subject{sub},
		},
		c.ClusterRole(),
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "cnibench-read"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cnibench-read"},
			Subjects:   []rbacv1.Subject{sub},
		},
	}
}

func serviceAccount(s string) (ns, name string, ok bool) {
	var rest string
	if _, err := fmt.Sscanf(s, "system:serviceaccount:%s", &rest); err != nil {
		return "", "", false
	}
	for i := range rest {
		if rest[i] == ':' {
			return rest[:i], rest[i+1:], true
		}
	}
	return "", "", false
}

// RunObjects are the objects a run with the given number of pod pairs
// (the study's measured and background pairs) creates, for review: its
// Lease, the DNS probe pod (created only when the cluster has a DNS
// Service, for the moment of the lookup), and per pair a server pod, its
// Service and a client pod. Not among them: the pods of a start-up burst
// (podstartup), client pods' spec under the burst's names, created and
// deleted within its trials. server and client are node names, or label
// selectors, which the pods get as their node selector or affinity
// (placeBySelector).
func (c Config) RunObjects(server, client string, pairs int) ([]runtime.Object, error) {
	objs := []runtime.Object{c.Lease(time.Time{}), c.ProbePod(client)}
	for i := range pairs {
		objs = append(objs, c.ServerPod(i, server), c.ServerService(i), c.ClientPod(i, client))
	}
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok || !IsSelector(p.Spec.NodeName) {
			continue
		}
		if err := placeBySelector(p, p.Spec.NodeName); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// YAML renders objects as one multi-document YAML stream.
func YAML(objs []runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		delete(m, "status")
		b, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(stripStatus(b))
	}
	return buf.Bytes(), nil
}

// stripStatus drops the empty "status: {}" and "creationTimestamp: null"
// lines that typed objects marshal to.
func stripStatus(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if bytes.Equal(t, []byte("status: {}")) || bytes.Equal(t, []byte("creationTimestamp: null")) {
			continue
		}
		out = append(out, l)
	}
	return bytes.Join(out, []byte("\n"))
}
