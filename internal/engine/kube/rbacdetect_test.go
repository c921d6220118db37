package kube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
)

// The ClusterRole grants CNI detection's reads and no more: list on
// Calico's IPPools in the two groups cniclues lists them from, and get
// on exactly Flannel's, Canal's and RKE2's net-conf.json ConfigMaps, by
// name (a ClusterRole's unnamed get on configmaps reads every one).
func TestClusterRoleDetectionRules(t *testing.T) {
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{"crd.projectcalico.org", "projectcalico.org"}, Resources: []string{"ippools"}, Verbs: []string{"list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"canal-config", "kube-flannel-cfg", "rke2-canal-config"}},
	}
	rules := Config{}.WithDefaults().ClusterRole().Rules
	var got []rbacv1.PolicyRule
	for _, r := range rules {
		if slices.Contains(r.Resources, "ippools") || slices.Contains(r.Resources, "configmaps") {
			got = append(got, r)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("detection rules %+v, want %+v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i].APIGroups, want[i].APIGroups) || !slices.Equal(got[i].Resources, want[i].Resources) ||
			!slices.Equal(got[i].Verbs, want[i].Verbs) || !slices.Equal(got[i].ResourceNames, want[i].ResourceNames) {
			t.Errorf("rule %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// RBAC from before the ClusterRole granted detection's reads does not
// fail preflight: the run is noted that CrossSubnet is only warned of.
func TestPreflightOptionalDetectionRights(t *testing.T) {
	srv := node("w1", map[string]string{"iperf": "server"}, true)
	cli := node("w2", map[string]string{"iperf": "client"}, true)
	for _, deny := range [][]string{nil, {"list ippools", "get configmaps"}} {
		cs := fake.NewClientset(namespace("cnibench"), srv, cli)
		allowAll(cs, deny...)
		p, err := Preflight(context.Background(), cs, Config{})
		if err != nil {
			t.Fatalf("deny %v: %v", deny, err)
		}
		if deny == nil {
			if len(p.Notes) != 0 {
				t.Errorf("all granted: notes %q", p.Notes)
			}
			continue
		}
		if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "list ippools.crd.projectcalico.org cluster-wide") ||
			!strings.Contains(p.Notes[0], "get configmaps named kube-flannel-cfg cluster-wide") || !strings.Contains(p.Notes[0], "CrossSubnet pool is only warned of") {
			t.Errorf("old RBAC: notes %q", p.Notes)
		}
	}
}

// allows says whether rules let verb on group's resource (the object
// name, "" for a list), as the RBAC authorizer decides for a
// ClusterRoleBinding: a rule with resourceNames allows only those names.
func allows(rules []rbacv1.PolicyRule, verb, group, resource, name string) bool {
	for _, r := range rules {
		if slices.Contains(r.Verbs, verb) && slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			(len(r.ResourceNames) == 0 || name != "" && slices.Contains(r.ResourceNames, name)) {
			return true
		}
	}
	return false
}

// asRunner makes cs and getIPPools answer only what rules allow.
func asRunner(t *testing.T, cs *fake.Clientset, rules []rbacv1.PolicyRule, pools string) {
	t.Helper()
	cs.PrependReactor("get", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.GetAction).GetName()
		if !allows(rules, "get", "", "configmaps", name) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, name, nil)
		}
		return false, nil, nil
	})
	cs.PrependReactor("list", "daemonsets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// A list with the selector metadata.name=NAME is authorized as
		// the list of NAME (k8s.io/apiserver requestinfo.go).
		name, _ := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		if !allows(rules, "list", "apps", "daemonsets", name) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "daemonsets"}, name, nil)
		}
		return false, nil, nil
	})
	old := getIPPools
	t.Cleanup(func() { getIPPools = old })
	getIPPools = func(context.Context, kubernetes.Interface) ([]byte, error) {
		if !allows(rules, "list", "crd.projectcalico.org", "ippools", "") {
			return nil, apierrors.NewForbidden(schema.GroupResource{Group: "crd.projectcalico.org", Resource: "ippools"}, "", nil)
		}
		return []byte(pools), nil
	}
}

// The ClusterRole lets the runner list the DaemonSets CNI detection
// weighs and the agent's, by name, and no other: a list of every
// DaemonSet would read every pod template, literal secrets in their
// environment included. With exactly these rights, detection still
// reads calico-node's pool setting and the wait the agent's
// tolerations, no list goes unnamed, and another DaemonSet is never read.
func TestClusterRoleListsDaemonSetsByName(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	rules := cfg.ClusterRole().Rules
	names := daemonSetNames()
	for _, n := range []string{"calico-node", "kube-flannel-ds", "canal", "antrea-agent", AgentName} {
		if !slices.Contains(names, n) {
			t.Errorf("daemonSetNames() %q lacks %s", names, n)
		}
	}
	for _, r := range rules {
		if slices.Contains(r.Resources, "daemonsets") && (!slices.Equal(r.Verbs, []string{"list"}) || !slices.Equal(r.ResourceNames, names)) {
			t.Errorf("ClusterRole grants %v daemonsets named %q, want list named %q", r.Verbs, r.ResourceNames, names)
		}
	}
	env := func(kv ...string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for i := 0; i < len(kv); i += 2 {
			out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	ds := func(ns, name string, e []corev1.EnvVar) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: e}}}}}}
	}
	cs, _ := kubeFixture(t, cfg, ds("kube-system", "calico-node", env("CALICO_IPV4POOL_IPIP", "Always")),
		ds("shop", "log-shipper", env("CALICO_IPV4POOL_IPIP", "Never", "API_TOKEN", "secret")), cfg.AgentDaemonSet(nil))
	w1, err := cs.CoreV1().Nodes().Get(context.Background(), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w1.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := cs.CoreV1().Nodes().Update(context.Background(), w1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	asRunner(t, cs, rules, `{"items":[]}`)
	var asked []string
	cs.PrependReactor("list", "daemonsets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name, _ := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		asked = append(asked, name)
		return false, nil, nil
	})

	got := daemonSets(context.Background(), cs)
	if len(got) != 1 || got[0].Namespace != "kube-system" || got[0].Name != "calico-node" || got[0].Env["CALICO_IPV4POOL_IPIP"] != "Always" {
		t.Errorf("daemonSets() = %+v, want kube-system/calico-node with its pool setting alone", got)
	}
	c := &Cluster{cfg: cfg, cs: cs}
	if !c.agentInstalled(context.Background()) {
		t.Error("agent not found installed")
	}
	if why := c.untolerated(context.Background(), []string{"w1"}); !strings.Contains(why, "node-role.kubernetes.io/control-plane:NoSchedule") {
		t.Errorf("untolerated: %q, want w1's taint", why)
	}
	if slices.Contains(asked, "") || slices.Contains(asked, "log-shipper") {
		t.Errorf("DaemonSets listed by the names %q: a list without one reads them all", asked)
	}
}

// With the ClusterRole's rights, the operator quickstart's VXLANCrossSubnet
// pool between nodes of one subnet resolves routed; with the ClusterRole
// of before (nodes and DaemonSets only) it is only warned of. Flannel's
// DirectRouting resolves only where its ConfigMap may be read, and goes
// unseen, without a warning, where not (preflight's note says so).
func TestDetectionWithClusterRoleRights(t *testing.T) {
	cfg := Config{RunID: "r1"}.WithDefaults()
	pools := `{"items":[{"metadata":{"name":"default-ipv4-ippool"},"spec":{"cidr":"192.168.0.0/16","ipipMode":"Never","vxlanMode":"CrossSubnet"}}]}`
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "kube-flannel-cfg"},
		Data: map[string]string{"net-conf.json": `{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","DirectRouting":true}}`}}
	before := []rbacv1.PolicyRule{ // the ClusterRole before detection's reads
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: []string{"list"}},
	}
	for _, tc := range []struct {
		rules                  []rbacv1.PolicyRule
		calico, flannel        string
		calicoWarn, flannelRtd bool
	}{
		{cfg.ClusterRole().Rules, "calico (bgp)", "flannel (host-gw)", false, true},
		{before, "calico (vxlan)", "flannel (vxlan)", true, false},
	} {
		cs, place := kubeFixture(t, cfg, cm)
		place.Server.Annotations = map[string]string{cnidetect.CalicoAddrAnnotation: "192.168.1.10/24"}
		place.Client.Annotations = map[string]string{cnidetect.CalicoAddrAnnotation: "192.168.1.11/24"}
		asRunner(t, cs, tc.rules, pools)
		in := cnidetect.Input{ConfFiles: map[string]string{"10-calico.conflist": `{"plugins":[{"type":"calico"}]}`}, Links: []string{"eth0", "vxlan.calico"}}
		cniClues(context.Background(), cs, place, &in)
		if r := cnidetect.Detect(in); r.String() != tc.calico || (r.Warning != "") != tc.calicoWarn {
			t.Errorf("%d rules: calico %s, routed %q, warning %q", len(tc.rules), r, r.Routed, r.Warning)
		}
		in = cnidetect.Input{Links: []string{"cni0", "flannel.1"}, DaemonSets: []cnidetect.DaemonSet{{Namespace: "kube-flannel", Name: "kube-flannel-ds"}}}
		cniClues(context.Background(), cs, place, &in)
		if r := cnidetect.Detect(in); r.String() != tc.flannel || (r.Routed != "") != tc.flannelRtd || r.Warning != "" {
			t.Errorf("%d rules: flannel %s, routed %q", len(tc.rules), r, r.Routed)
		}
	}
}

// The engine's preflight passes the note on to the run's notes (env.json
// and the terminal), whatever its agents then answer.
func TestEnginePreflightNotesOldRBAC(t *testing.T) {
	cs := fake.NewClientset(namespace("cnibench"), node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true))
	allowAll(cs, "list ippools", "get configmaps")
	e := NewEngine(nil)
	e.cs, e.rc = cs, &rest.Config{Host: "http://127.0.0.1:1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, _ := e.Preflight(ctx, stubStudy(t, "[{tool: iperf3}]"), engine.Needs{})
	if !slices.ContainsFunc(f.Notes, func(n string) bool { return strings.Contains(n, "list ippools.crd.projectcalico.org") }) {
		t.Errorf("notes %q", f.Notes)
	}
}
