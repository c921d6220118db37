package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// testdata/getent-hosts-kubernetes.txt is glibc's `getent hosts
// kubernetes.default.svc` in a network namespace whose resolv.conf has a
// pod's search list (cnibench.svc.cluster.local svc.cluster.local
// cluster.local, ndots:5) and a DNS server answering cluster.local names:
// getent prints the fully qualified name the search list completed.
func TestParseGetentHosts(t *testing.T) {
	b, err := os.ReadFile("testdata/getent-hosts-kubernetes.txt")
	if err != nil {
		t.Fatal(err)
	}
	ip, name, ok := ParseGetentHosts(b)
	if !ok || !ip.Equal(net.ParseIP("10.96.0.1")) || name != "kubernetes.default.svc.cluster.local" {
		t.Fatalf("got %v %q %v", ip, name, ok)
	}
	for _, bad := range []string{"", "\n", "not-an-ip name\n", "10.0.0.1\n"} {
		if _, _, ok := ParseGetentHosts([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseGetentHosts(f *testing.F) {
	f.Add([]byte("10.96.0.1       kubernetes.default.svc.cluster.local\n"))
	f.Add([]byte("fd00::1 a.b.svc.example.org. alias\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, name, ok := ParseGetentHosts(b)
		if ok && (ip == nil || name == "" || strings.ContainsAny(name, " \t\n")) {
			t.Fatalf("ok with ip %v name %q", ip, name)
		}
	})
}

func dnsService(ip string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: DNSNamespace, Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec:       corev1.ServiceSpec{ClusterIP: ip},
	}
}

func dnsSlice(ready ...bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kube-dns-abc", Namespace: DNSNamespace,
		Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns"}}}
	for i, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.0.%d", i+2)},
			Conditions: discoveryv1.EndpointConditions{Ready: &r}})
	}
	return s
}

// kubeFixture is a fake cluster with ready agents on w1 and w2 whose
// pods become ready at once, with Services given ClusterIPs.
func kubeFixture(t *testing.T, cfg Config, objs ...runtime.Object) (*fake.Clientset, Placement) {
	t.Helper()
	w1, w2 := node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true)
	agentPod := func(name, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: DefaultAgentNamespace, Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}}, Spec: corev1.PodSpec{NodeName: node}}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Ready: true}}}
		return p
	}
	cs := fake.NewClientset(append([]runtime.Object{namespace("cnibench"), w1, w2, agentPod("agent-a", "w1"), agentPod("agent-b", "w2")}, objs...)...)
	ip := 10
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		ip++
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.244.1.%d", ip), ContainerStatuses: []corev1.ContainerStatus{{Ready: true}}}
		return false, nil, nil
	})
	cs.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*corev1.Service)
		s.Spec.ClusterIP = fmt.Sprintf("10.96.0.%d", 10+len(s.Name))
		return false, nil, nil
	})
	return cs, Placement{Server: w1, Client: w2}
}

func agentFS() *memFS {
	fs := newMemFS()
	fs.set("", "sysfs", "class/net/eth1/ifindex", "2")
	return fs
}

// getentFake answers `getent hosts NAME` from a table; a missing name
// exits 2 as glibc's getent does.
func getentFake(answers map[string]string) func(pod string, argv []string) (string, int) {
	return func(pod string, argv []string) (string, int) {
		if len(argv) != 3 || argv[0] != "getent" || argv[1] != "hosts" {
			return "unexpected " + strings.Join(argv, " "), 1
		}
		if a, ok := answers[argv[2]]; ok {
			return a + "\n", 0
		}
		return "", 2
	}
}

func TestAddressingDecision(t *testing.T) {
	const svc0 = "cnb-r1-srv-0.cnibench.svc.cluster.local"
	svc0IP := fmt.Sprintf("10.96.0.%d", 10+len("cnb-r1-srv-0"))
	okDNS := map[string]string{
		"kubernetes.default.svc": "10.96.0.1       kubernetes.default.svc.cluster.local",
		svc0:                     svc0IP + "      " + svc0,
	}
	forbidden := func(cs *fake.Clientset) {
		cs.PrependReactor("list", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if a.GetNamespace() == DNSNamespace {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", fmt.Errorf("no"))
			}
			return false, nil, nil
		})
	}
	for _, tc := range []struct {
		name    string
		objs    []runtime.Object
		react   func(*fake.Clientset)
		answers map[string]string
		wantDNS bool
		probe   bool // a probe pod was created
		why     string
		addr    string
	}{
		{name: "no DNS service", answers: okDNS, why: "no cluster DNS Service (label k8s-app=kube-dns) in kube-system", addr: svc0IP},
		{name: "no ready endpoints", objs: []runtime.Object{dnsService("10.96.0.10"), dnsSlice(false, false)}, answers: okDNS,
			why: "kube-system/kube-dns has no ready endpoints", addr: svc0IP},
		{name: "DNS works", objs: []runtime.Object{dnsService("10.96.0.10"), dnsSlice(false, true)}, answers: okDNS, wantDNS: true, probe: true,
			why: "kube-dns (10.96.0.10) has 1 ready endpoint(s); `getent hosts kubernetes.default.svc` in a pod on node w2 answered kubernetes.default.svc.cluster.local", addr: svc0},
		{name: "lookup fails", objs: []runtime.Object{dnsService("10.96.0.10"), dnsSlice(true)}, answers: map[string]string{}, probe: true,
			why: "`getent hosts kubernetes.default.svc` in pod cnb-r1-dns found no address", addr: svc0IP},
		{name: "kube-system not readable, lookup decides", react: forbidden, answers: okDNS, wantDNS: true, probe: true,
			why: "could not read the cluster DNS Service (k8s-app=kube-dns in kube-system: Forbidden)", addr: svc0},
		{name: "odd answer", objs: []runtime.Object{dnsService("10.96.0.10"), dnsSlice(true)}, probe: true,
			answers: map[string]string{"kubernetes.default.svc": "10.96.0.1 kubernetes"}, why: `answered the name "kubernetes"`, addr: svc0IP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{RunID: "r1"}.WithDefaults()
			cs, place := kubeFixture(t, cfg, tc.objs...)
			if tc.react != nil {
				tc.react(cs)
			}
			fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: getentFake(tc.answers)}
			c, err := Up(context.Background(), cs, fx, cfg, place, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.poll = time.Millisecond
			a := c.Addressing()
			if a.DNS != tc.wantDNS || !strings.Contains(a.Why, tc.why) {
				t.Errorf("addressing %+v, want DNS=%v because %q", a, tc.wantDNS, tc.why)
			}
			if tc.wantDNS && (a.Domain != "cluster.local" || !strings.Contains(a.Note(), "SVC.NAMESPACE.svc.cluster.local")) {
				t.Errorf("domain %q, note %q", a.Domain, a.Note())
			}
			created := false
			for _, act := range cs.Actions() {
				if ca, ok := act.(k8stesting.CreateAction); ok && act.GetResource().Resource == "pods" {
					created = created || ca.GetObject().(*corev1.Pod).Name == "cnb-r1-dns"
				}
			}
			if created != tc.probe {
				t.Errorf("probe pod created: %v, want %v", created, tc.probe)
			}
			if _, err := cs.CoreV1().Pods("cnibench").Get(context.Background(), "cnb-r1-dns", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("probe pod still there: %v", err)
			}
			servers, clients, err := c.Scale(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			s := servers[0].(*Pod)
			if s.Addr() != tc.addr || s.FrontIP().String() != svc0IP || !strings.HasPrefix(s.IP().String(), "10.244.") {
				t.Errorf("server addr %q front %v ip %v, want addr %q", s.Addr(), s.FrontIP(), s.IP(), tc.addr)
			}
			if c := clients[0].(*Pod); c.Addr() != c.IP().String() {
				t.Errorf("client pod addr %q", c.Addr())
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// With DNS, a Service that does not resolve to its own ClusterIP from its
// client pod fails Scale (before any trial) with what was seen.
func TestScaleWaitsForServiceName(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg, dnsService("10.96.0.10"), dnsSlice(true))
	answers := map[string]string{"kubernetes.default.svc": "10.96.0.1 kubernetes.default.svc.example.org"}
	var lookups []string
	tool := getentFake(answers)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir(), tool: func(pod string, argv []string) (string, int) {
		lookups = append(lookups, pod+" "+strings.Join(argv, " "))
		return tool(pod, argv)
	}}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.poll, c.resolveWait = time.Millisecond, 50*time.Millisecond
	if a := c.Addressing(); !a.DNS || a.Domain != "example.org" {
		t.Fatalf("addressing %+v", a)
	}
	answers["cnb-r1-srv-0.cnibench.svc.example.org"] = "10.96.9.9 cnb-r1-srv-0.cnibench.svc.example.org"
	_, _, err = c.Scale(context.Background(), 1)
	if err == nil || !strings.Contains(err.Error(), "resolves to 10.96.9.9, not the Service's ClusterIP") {
		t.Fatalf("Scale: %v", err)
	}
	if !slices.Contains(lookups, "cnb-r1-cli-0 getent hosts cnb-r1-srv-0.cnibench.svc.example.org") {
		t.Errorf("the Service was not looked up from its client pod: %v", lookups)
	}
}

// A run stopped during the lookup stops; it does not fall back to
// ClusterIPs as if DNS had failed.
func TestLookupCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fx := &fakeExec{tool: func(string, []string) (string, int) {
		cancel()
		return "", 2
	}}
	p := &Pod{ns: "cnibench", name: "cnb-r1-dns", exec: fx}
	if _, _, err := lookup(ctx, p, "kubernetes.default.svc"); !errors.Is(err, context.Canceled) || errors.Is(err, errNoLookup) {
		t.Fatalf("lookup after cancel: %v", err)
	}
}
