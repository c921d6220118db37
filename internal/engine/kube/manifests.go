package kube

import (
	"bytes"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/cnibench/cnibench/internal/agent"
)

// BasePort is iperf3's default port; pair i listens on BasePort+i (the
// runner's convention).
const BasePort = 5201

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

// AgentDaemonSet is the node agent, limited to the named nodes:
// privileged (it writes sysfs in other network namespaces), host network
// (its /sys and /proc/sys/net are the node's), host PID (it finds pods'
// namespaces under /proc), /run/cnibench for its journal, and the CNI
// config directory read-only. It needs no API access.
func (c Config) AgentDaemonSet(nodes []string) *appsv1.DaemonSet {
	labels := c.labels(RoleAgent)
	t := true
	f := false
	grace := int64(30)
	hostDir := corev1.HostPathDirectoryOrCreate
	// One term per node: a metadata.name field selector takes one value,
	// and terms are ORed.
	var terms []corev1.NodeSelectorTerm
	for _, n := range nodes {
		terms = append(terms, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n},
		}}})
	}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: c.meta(agentName(c.RunID), RoleAgent),
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: c.RunID, LabelRole: RoleAgent}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					HostNetwork:                   true,
					HostPID:                       true,
					DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
					AutomountServiceAccountToken:  &f,
					TerminationGracePeriodSeconds: &grace,
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
					}},
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:            "agent",
						Image:           c.Image,
						ImagePullPolicy: c.PullPolicy,
						Command:         []string{BinPath, "agent", "daemon", "--run", c.RunID, "--cni-conf-dir", "/host/cni/net.d"},
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
// (TCP and UDP on the pair's port).
func (c Config) ServerService(i int) *corev1.Service {
	name := serverName(c.RunID, i)
	port := int32(BasePort + i)
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: c.meta(name, RoleServer),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelRun: c.RunID, LabelPod: name},
			Ports: []corev1.ServicePort{
				{Name: "tcp", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP},
				{Name: "udp", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolUDP},
			},
		},
	}
}

// Role is the least privilege the controller needs in its namespace.
func (c Config) Role() *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench", Namespace: c.Namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"get", "list", "create", "delete"}},
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
// count, addresses) and DaemonSets (CNI detection).
func (c Config) ClusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "cnibench-read"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list"}},
		},
	}
}

// RBAC returns the Namespace, Role, ClusterRole and their bindings for
// subject (a user or "system:serviceaccount:NS:NAME").
func (c Config) RBAC(subject string) []runtime.Object {
	sub := rbacv1.Subject{Kind: rbacv1.UserKind, Name: subject, APIGroup: rbacv1.GroupName}
	if ns, name, ok := serviceAccount(subject); ok {
		sub = rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
	}
	return []runtime.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: c.Namespace,
			// The agent is privileged; Pod Security admission must allow it here.
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}},
		c.Role(),
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "cnibench", Namespace: c.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cnibench"},
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

// RunObjects are the objects a run with the given replica count creates
// (the DNS probe pod only when the cluster has a DNS Service, and only
// for the moment of the lookup).
func (c Config) RunObjects(server, client string, replicas int) []runtime.Object {
	objs := []runtime.Object{c.AgentDaemonSet([]string{server, client}), c.ProbePod(client)}
	for i := range replicas {
		objs = append(objs, c.ServerPod(i, server), c.ServerService(i), c.ClientPod(i, client))
	}
	return objs
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
