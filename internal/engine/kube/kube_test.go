package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cnibench/cnibench/internal/agent"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/tune"
)

func node(name string, labels map[string]string, ready bool) *corev1.Node {
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionFalse
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.77.0." + fmt.Sprint(len(name))}},
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		},
	}
}

func namespace(n string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}
}

// allowAll answers access reviews, denying the listed "verb resource[/sub]".
func allowAll(cs *fake.Clientset, deny ...string) {
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		res := ra.Resource
		if ra.Subresource != "" {
			res += "/" + ra.Subresource
		}
		r.Status.Allowed = !slices.Contains(deny, ra.Verb+" "+res)
		return true, r, nil
	})
}

func TestPreflight(t *testing.T) {
	srv := node("w1", map[string]string{"iperf": "server"}, true)
	cli := node("w2", map[string]string{"iperf": "client"}, true)
	for _, tc := range []struct {
		name    string
		objs    []runtime.Object
		cfg     Config
		deny    []string
		down    bool
		wantErr error
		wantMsg string
	}{
		{name: "ok by labels", objs: []runtime.Object{namespace("cnibench"), srv, cli}},
		{name: "ok by names", objs: []runtime.Object{namespace("cnibench"), srv, cli}, cfg: Config{ServerNode: "w1", ClientNode: "w2"}},
		// Selectors without '=': a prefixed key alone (nodes that have it)
		// and a set-based notin were taken for node names, not found.
		{name: "ok by key and notin", objs: []runtime.Object{namespace("cnibench"), node("w1", map[string]string{"iperf": "server", "node-role.kubernetes.io/bench": ""}, true), cli},
			cfg: Config{ServerNode: "node-role.kubernetes.io/bench", ClientNode: "iperf notin (server)"}},
		{name: "unreachable", down: true, wantErr: ErrUnreachable, wantMsg: "--kubeconfig"},
		{name: "no namespace", objs: []runtime.Object{srv, cli}, wantErr: ErrNoNamespace, wantMsg: "cnibench"},
		{name: "no exec permission", objs: []runtime.Object{namespace("cnibench"), srv, cli}, deny: []string{"create pods/exec"}, wantErr: ErrForbidden, wantMsg: "create pods/exec in namespace cnibench"},
		{name: "no service read", objs: []runtime.Object{namespace("cnibench"), srv, cli}, deny: []string{"get services"}, wantErr: ErrForbidden, wantMsg: "get services in namespace cnibench"},
		{name: "no node read", objs: []runtime.Object{namespace("cnibench"), srv, cli}, deny: []string{"list nodes"}, wantErr: ErrForbidden, wantMsg: "list nodes cluster-wide"},
		{name: "missing node name", objs: []runtime.Object{namespace("cnibench"), srv, cli}, cfg: Config{ServerNode: "nope"}, wantErr: ErrNoNode, wantMsg: `server node "nope" does not exist`},
		{name: "no labelled client", objs: []runtime.Object{namespace("cnibench"), srv}, wantErr: ErrNoNode, wantMsg: "no node has the client label iperf=client"},
		{name: "not ready", objs: []runtime.Object{namespace("cnibench"), srv, node("w3", map[string]string{"iperf": "client"}, false)}, wantErr: ErrNodeNotReady, wantMsg: "client node w3"},
		{name: "same node", objs: []runtime.Object{namespace("cnibench"), srv, cli}, cfg: Config{ServerNode: "w1", ClientNode: "w1"}, wantMsg: "both w1"},
		{name: "ambiguous selector", objs: []runtime.Object{namespace("cnibench"), srv, cli, node("w4", map[string]string{"iperf": "server"}, true)}, wantMsg: "matches 2 nodes (w1, w4)"},
		{name: "bad pull policy", objs: []runtime.Object{namespace("cnibench"), srv, cli}, cfg: Config{PullPolicy: "Sometimes"}, wantMsg: "pull policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objs...)
			allowAll(cs, tc.deny...)
			if tc.down {
				cs.PrependReactor("get", "version", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("dial tcp 10.0.0.1:6443: connection refused")
				})
			}
			p, err := Preflight(context.Background(), cs, tc.cfg)
			if tc.wantErr == nil && tc.wantMsg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Server.Name != "w1" || p.Client.Name != "w2" {
					t.Fatalf("placement %s -> %s", p.Client.Name, p.Server.Name)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v is not %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
			noneCreated(t, cs)
		})
	}
}

func TestManifests(t *testing.T) {
	cfg := Config{RunID: "abc123", Controller: "host/1/2"}.WithDefaults()
	objs, err := cfg.RunObjects("w1", "w2", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2+3*2 { // the run's Lease, DNS probe pod, 2 x (server pod, Service, client pod)
		t.Fatalf("%d objects", len(objs))
	}
	for _, o := range objs {
		m, err := metaOf(o)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetLabels()[LabelRun] != "abc123" || m.GetLabels()[LabelManagedBy] != ManagedBy || m.GetNamespace() != "cnibench" {
			t.Errorf("%s: labels %v ns %q", m.GetName(), m.GetLabels(), m.GetNamespace())
		}
		if m.GetAnnotations()[AnnotationController] != "host/1/2" {
			t.Errorf("%s: no controller annotation", m.GetName())
		}
	}
	ds := cfg.AgentDaemonSet(map[string]string{"cnibench.io/bench": "true"})
	ps := ds.Spec.Template.Spec
	if ds.Namespace != DefaultAgentNamespace || ps.NodeSelector["cnibench.io/bench"] != "true" {
		t.Errorf("agent in %s on %v", ds.Namespace, ps.NodeSelector)
	}
	if !ps.HostNetwork || !ps.HostPID || !*ps.Containers[0].SecurityContext.Privileged {
		t.Error("agent must be host-network, host-PID and privileged")
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Error("agent must not get an API token")
	}
	// Nodes chosen by label: every taint tolerated. Every node: none, so
	// a control-plane node's NoSchedule taint keeps the agent (root on
	// its node) off it.
	if len(ps.Tolerations) != 1 || ps.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("agent on chosen nodes tolerates %+v, want every taint", ps.Tolerations)
	}
	if tol := cfg.AgentDaemonSet(nil).Spec.Template.Spec.Tolerations; len(tol) != 0 {
		t.Errorf("agent on every node tolerates %+v, want none", tol)
	}
	for k, v := range ds.Spec.Selector.MatchLabels {
		if ds.Spec.Template.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the template", k, v)
		}
	}
	sp := cfg.ServerPod(1, "w1")
	if sp.Spec.NodeName != "w1" || sp.Spec.Containers[0].Ports[0].ContainerPort != BasePort+1 {
		t.Errorf("server pod 1: node %s ports %v", sp.Spec.NodeName, sp.Spec.Containers[0].Ports)
	}
	if sp.Spec.Containers[0].Env[0].Value != "cnibench/cnb-abc123-srv-1" {
		t.Errorf("pod marker %v", sp.Spec.Containers[0].Env)
	}
	if sp.Spec.Containers[0].SecurityContext != nil {
		t.Error("workload pods need no privileges")
	}
	svc := cfg.ServerService(1)
	if svc.Spec.Selector[LabelPod] != sp.Labels[LabelPod] {
		t.Errorf("service 1 selects %v", svc.Spec.Selector)
	}
	// The pod's port, TCP and UDP, and its second TCP port (qperf's test
	// socket), each to the same number on the pod.
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s %d->%s", p.Protocol, p.Port, p.TargetPort.String()))
	}
	if got, want := strings.Join(ports, ", "), "TCP 5202->5202, UDP 5202->5202, TCP 6202->6202"; got != want {
		t.Errorf("service 1 ports %s, want %s", got, want)
	}
	y, err := YAML(append(append(objs, cfg.RBAC("jane")...), cfg.AgentInstall(nil)...))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: DaemonSet", "kind: Pod", "kind: Service", "kind: Role", "kind: ClusterRole", "kind: RoleBinding", "pods/exec", "privileged: true"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if strings.Contains(string(y), "status: {}") {
		t.Error("manifests carry empty status")
	}
	// The ClusterRole and the kube-system Role are read-only.
	for _, r := range append(cfg.ClusterRole().Rules, cfg.DNSRole().Rules...) {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" {
				t.Errorf("read-only role grants %s on %v", v, r.Resources)
			}
		}
	}
	if p := cfg.ProbePod("w2"); p.Spec.NodeName != "w2" || p.Labels[LabelRole] != RoleProbe || p.Spec.Containers[0].SecurityContext != nil {
		t.Errorf("probe pod: node %s labels %v", p.Spec.NodeName, p.Labels)
	}
}

// Nodes given as label selectors (the flags' defaults) place the printed
// pods by the selector, which a run resolves to one node at preflight: a
// nodeSelector for equalities, a required node affinity otherwise, and
// no nodeName (a selector is none).
func TestRunObjectsPlaceBySelector(t *testing.T) {
	cfg := Config{RunID: "review"}.WithDefaults()
	objs, err := cfg.RunObjects("iperf=server", "role in (client,any),!tainted", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		switch p.Labels[LabelRole] {
		case RoleServer:
			if p.Spec.NodeName != "" || fmt.Sprint(p.Spec.NodeSelector) != "map[iperf:server]" || p.Spec.Affinity != nil {
				t.Errorf("server pod: nodeName %q, nodeSelector %v, affinity %v", p.Spec.NodeName, p.Spec.NodeSelector, p.Spec.Affinity)
			}
		default:
			a := p.Spec.Affinity
			if p.Spec.NodeName != "" || p.Spec.NodeSelector != nil || a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
				t.Fatalf("%s pod: nodeName %q, nodeSelector %v, affinity %v", p.Labels[LabelRole], p.Spec.NodeName, p.Spec.NodeSelector, a)
			}
			if got := fmt.Sprint(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); got != "[{[{role In [any client]} {tainted DoesNotExist []}] []}]" {
				t.Errorf("%s pod: node affinity %s", p.Labels[LabelRole], got)
			}
		}
	}
	if _, err := cfg.RunObjects("a=b=c", "w2", 1); err == nil || !strings.Contains(err.Error(), `node selector "a=b=c"`) {
		t.Errorf("bad selector: %v", err)
	}
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	if m, ok := o.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%T has no metadata", o)
}

func TestSelectStale(t *testing.T) {
	alive := func(pid int, _ uint64) bool { return pid == 100 }
	runs := []RunInfo{
		{Run: "live", Controller: "me/100/5"},
		{Run: "dead", Controller: "me/200/5"},
		{Run: "other", Controller: "them/300/5"},
		{Run: "anon"},
	}
	names := func(rs []RunInfo) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.Run)
		}
		return strings.Join(s, ",")
	}
	stale, skipped := SelectStale(runs, "", false, "me", alive)
	if names(stale) != "dead" || len(skipped) != 3 {
		t.Errorf("default: stale %s, skipped %v", names(stale), skipped)
	}
	stale, _ = SelectStale(runs, "", true, "me", alive)
	if names(stale) != "dead,other,anon" {
		t.Errorf("--all: stale %s", names(stale))
	}
	stale, skipped = SelectStale(runs, "live", true, "me", alive)
	if len(stale) != 0 || skipped["live"] == "" {
		t.Errorf("--run live: stale %s, skipped %v", names(stale), skipped)
	}
	stale, _ = SelectStale(runs, "other", false, "me", alive)
	if names(stale) != "other" {
		t.Errorf("--run other: stale %s", names(stale))
	}
}

func TestDeleteRunSelectsByLabel(t *testing.T) {
	a := Config{RunID: "aaa"}.WithDefaults()
	b := Config{RunID: "bbb"}.WithDefaults()
	foreign := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user-pod", Namespace: "cnibench", Labels: map[string]string{LabelRun: "aaa"}}}
	cs := fake.NewClientset(a.Lease(time.Now()), a.ServerPod(0, "w1"), a.ServerService(0), a.ClientPod(0, "w2"),
		b.ServerPod(0, "w1"), b.ServerService(0), foreign)
	deleted, err := DeleteRun(context.Background(), cs, "cnibench", "aaa", true)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(deleted)
	want := "lease/cnb-aaa,pod/cnb-aaa-cli-0,pod/cnb-aaa-srv-0,service/cnb-aaa-srv-0"
	if strings.Join(deleted, ",") != want {
		t.Errorf("deleted %v, want %s", deleted, want)
	}
	pods, _ := cs.CoreV1().Pods("cnibench").List(context.Background(), metav1.ListOptions{})
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	sort.Strings(left)
	if strings.Join(left, ",") != "cnb-bbb-srv-0,user-pod" {
		t.Errorf("left %v", left)
	}
	runs, err := ListRuns(context.Background(), cs, "cnibench", time.Now())
	if err != nil || len(runs) != 1 || runs[0].Run != "bbb" {
		t.Errorf("runs after delete: %+v %v", runs, err)
	}
	// Deleting again is success.
	if _, err := DeleteRun(context.Background(), cs, "cnibench", "aaa", true); err != nil {
		t.Error(err)
	}
}

// fakeExec runs agent sessions in-process on a memFS and answers tool
// execs with canned output.
type fakeExec struct {
	mu    sync.Mutex
	fs    *memFS
	dir   string
	argvs [][]string
	tool  func(pod string, argv []string) (string, int)
	// features answers the agents' kernel feature probes (nil: every
	// feature is there).
	features func(pod string, names []string) map[string]string
	// cniDir is the agents' CNI config directory ("": none mounted).
	cniDir string
}

func (f *fakeExec) Exec(ctx context.Context, ns, pod, container string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f.mu.Lock()
	f.argvs = append(f.argvs, argv)
	f.mu.Unlock()
	if len(argv) >= 3 && argv[1] == "agent" && argv[2] == "serve" {
		if ns != DefaultAgentNamespace {
			return fmt.Errorf("agent session exec'd in namespace %s, not the agent's", ns)
		}
		run := ""
		if i := slices.Index(argv, "--run"); i >= 0 && i+1 < len(argv) {
			run = argv[i+1]
		}
		srv := agent.NewServer(agent.Config{Run: run, FS: f.fs, Pods: podNS{}, JournalDir: f.dir + "/" + pod, CNIConfDir: f.cniDir,
			AddrDev: func(string) (string, error) { return "eth1", nil },
			// Not this machine's devices: no tunnel is bound to a device here.
			LowerDev: func(string) (string, error) { return "", nil },
			// Not this machine's iptables-save (Describe counts rules).
			Iptables: func() (map[string]int, string, error) {
				return map[string]int{"chains": 1, "rules": 2}, "iptables-legacy-save; iptables-nft-save holds 3 rules too, not counted", nil
			},
			Features: func(names []string) (map[string]string, error) {
				if f.features == nil {
					return nil, nil
				}
				return f.features(pod, names), nil
			}})
		return srv.Serve(stdin, stdout)
	}
	if len(argv) >= 4 && argv[2] == "exec" {
		out, code := f.tool(pod, argv[4:])
		io.WriteString(stdout, out)
		if code != 0 {
			return &ExitCodeError{Code: code}
		}
		return nil
	}
	return fmt.Errorf("unexpected exec %v", argv)
}

type podNS struct{}

func (podNS) Netns(pod string) (string, error) { return "ns-" + pod, nil }

func TestUpScaleClose(t *testing.T) {
	cfg := Config{RunID: "r1", Controller: "me/1/1"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fs := newMemFS()
	fs.set("", "sysfs", "class/net/eth1/ifindex", "2")
	fs.set("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus", "0")
	fs.set("", "sysfs", "class/net/veth0/ifindex", "9")
	fs.set("", "sysfs", "class/net/veth0/iflink", "3") // a veth pair with the pod's eth0
	fs.set("ns-cnibench/cnb-r1-srv-0", "sysfs", "class/net/eth0/ifindex", "3")
	fs.set("ns-cnibench/cnb-r1-srv-0", "sysfs", "class/net/eth0/iflink", "9")
	fx := &fakeExec{fs: fs, dir: t.TempDir(), tool: func(pod string, argv []string) (string, int) { return "ran " + strings.Join(argv, " "), 0 }}
	c, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.poll = time.Millisecond
	if c.server.agentPod != "agent-a" || c.client.agentPod != "agent-b" {
		t.Errorf("agents %s %s", c.server.agentPod, c.client.agentPod)
	}
	if u := c.Server().Underlay(); u.Name != "eth1" || u.Netns != "" {
		t.Errorf("underlay %+v", u)
	}
	if _, ok := c.Server().Tunnel(); ok {
		t.Error("tunnel found on a node without one")
	}
	servers, clients, err := c.Scale(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || len(clients) != 2 || servers[1].Node() != "w1" || clients[1].Node() != "w2" {
		t.Fatalf("pods %v %v", servers, clients)
	}
	// No cluster DNS here: clients are given the Service's ClusterIP,
	// servers bind to their own pod IP.
	if a := engine.Addr(servers[0]); !strings.HasPrefix(a, "10.96.") || !strings.HasPrefix(servers[0].IP().String(), "10.244.") {
		t.Errorf("server pod: clients get %s (want its Service's ClusterIP), own IP %s", a, servers[0].IP())
	}
	veths, err := c.Server().HostVeths(servers[:1])
	if err != nil || veths[0].Name != "veth0" {
		t.Errorf("host veths %v %v", veths, err)
	}
	// A knob written through the agent is journaled and reverted at Close.
	var kfs tune.FS = c.ServerNode().Agent()
	if err := kfs.Write("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus", "f"); err != nil {
		t.Fatal(err)
	}
	p, _ := clients[0].Start(context.Background(), []string{"iperf3", "-c", engine.Addr(servers[0])})
	out, _, err := p.Wait()
	if err != nil || !strings.Contains(string(out), "ran iperf3 -c 10.96.") {
		t.Errorf("client exec: %q %v", out, err)
	}
	if _, _, err := c.Scale(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if v := fs.get("", "sysfs", "class/net/eth1/queues/rx-0/rps_cpus"); v != "0" {
		t.Errorf("knob not reverted at Close: %q", v)
	}
	runs, _ := ListRuns(context.Background(), cs, "cnibench", time.Now())
	if len(runs) != 0 {
		t.Errorf("objects left after Close: %+v", runs)
	}
}

func TestExitErrorKeepsOutput(t *testing.T) {
	fx := &fakeExec{tool: func(string, []string) (string, int) { return "iperf3: error - unable to connect", 1 }}
	p := &Pod{ns: "cnibench", name: "x", exec: fx}
	proc, _ := p.Start(context.Background(), []string{"iperf3", "-c", "1.2.3.4"})
	out, _, err := proc.Wait()
	var ee *engine.ExitError
	if !errors.As(err, &ee) || !strings.Contains(string(ee.Stdout), "unable to connect") || len(out) == 0 {
		t.Fatalf("err %v out %q", err, out)
	}
	var ce *ExitCodeError
	if !errors.As(err, &ce) || ce.Code != 1 {
		t.Errorf("exit code lost: %v", err)
	}
	proc.Stop() // after exit: harmless
}

func TestUpFailsWithoutAgentBeforeWorkloadPods(t *testing.T) {
	w1, w2 := node("w1", nil, true), node("w2", nil, true)
	for _, tc := range []struct {
		name string
		pods []runtime.Object
		want string
	}{
		{"never scheduled", []runtime.Object{Config{}.WithDefaults().AgentDaemonSet(nil)}, "agent not running on node w1, w2 after"},
		{"not installed", nil, "agent not running on node w1, w2: the cnibench agent is not installed"},
		{"image missing", []runtime.Object{&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "agent-x", Namespace: DefaultAgentNamespace, Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}},
			Spec:       corev1.PodSpec{NodeName: "w1"},
			Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image not present"}}}}},
		}}, "ErrImageNeverPull"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(append([]runtime.Object{namespace("cnibench"), w1, w2}, tc.pods...)...)
			cfg := Config{RunID: "r2", Timeout: 50 * time.Millisecond}
			_, err := Up(context.Background(), cs, &fakeExec{}, cfg, Placement{Server: w1, Client: w2}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			for _, a := range cs.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
					t.Error("a workload pod was created")
				}
			}
			if runs, _ := ListRuns(context.Background(), cs, "cnibench", time.Now()); len(runs) != 0 {
				t.Errorf("left behind: %+v", runs)
			}
		})
	}
}

// A node with a taint the agent (installed without --agent-nodes, so
// tolerating none) does not tolerate gets no agent: Up says which taint
// at once rather than waiting out its timeout for a pod that will not
// come; a node condition's taint is the DaemonSet controller's to
// tolerate, and one installed with --agent-nodes tolerates every taint.
func TestUpNamesUntoleratedTaint(t *testing.T) {
	w1, w2 := node("w1", map[string]string{"bench": "y"}, true), node("w2", map[string]string{"bench": "y"}, true)
	w1.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
		{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	// An agent pod there, not ready yet (scheduled before the taint, or
	// tolerating it by its namespace's defaults): it may come up.
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-x", Namespace: DefaultAgentNamespace, Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleAgent}},
		Spec: corev1.PodSpec{NodeName: "w1"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	for _, c := range []struct {
		selector map[string]string
		pods     []runtime.Object
		want     string
	}{
		{nil, nil, "node w1 has the taint node-role.kubernetes.io/control-plane:NoSchedule, which the agent's DaemonSet does not tolerate"},
		{map[string]string{"bench": "y"}, nil, "after"},
		{nil, []runtime.Object{pending}, "after"},
	} {
		objs := append([]runtime.Object{namespace("cnibench"), w1, w2, Config{}.WithDefaults().AgentDaemonSet(c.selector)}, c.pods...)
		cs := fake.NewClientset(objs...)
		cfg := Config{RunID: "r2", Timeout: time.Hour}
		if c.want == "after" {
			cfg.Timeout = 50 * time.Millisecond
		}
		_, err := Up(context.Background(), cs, &fakeExec{}, cfg, Placement{Server: w1, Client: w2}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("selector %v: %v, want %q", c.selector, err, c.want)
		}
	}
}

// An image without a tool the study runs fails Up through the agent,
// before any workload pod exists.
func TestUpChecksImageTools(t *testing.T) {
	cfg := Config{RunID: "r3", Tools: []string{"sh", "cnibench-no-such-tool"}}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	fx := &fakeExec{fs: agentFS(), dir: t.TempDir()}
	_, err := Up(context.Background(), cs, fx, cfg, place, nil)
	if !errors.Is(err, ErrImageTools) || !strings.Contains(err.Error(), "has no cnibench-no-such-tool, which") || strings.Contains(err.Error(), "sh,") {
		t.Fatalf("Up: %v", err)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
			t.Error("a pod was created")
		}
	}
	if runs, _ := ListRuns(context.Background(), cs, "cnibench", time.Now()); len(runs) != 0 {
		t.Errorf("left behind: %+v", runs)
	}
}

// An agent broken on a node the run does not use does not fail the run
// while a wanted node's agent is still starting: waiting goes on, and a
// timeout names the wanted node's state, not the other node's.
func TestWaitAgentsIgnoresOtherNodes(t *testing.T) {
	mk, waiting, ready := agentPod, agentWaiting, agentReady
	cs := fake.NewClientset(mk("a1", "w1", waiting("ContainerCreating")), mk("a2", "w2", ready), mk("a9", "w9", waiting("CrashLoopBackOff")))
	c := &Cluster{cfg: Config{Timeout: 300 * time.Millisecond}.WithDefaults(), cs: cs, poll: 20 * time.Millisecond}
	start := time.Now()
	_, err := c.waitAgents(context.Background(), "w1", "w2")
	if err == nil || strings.Contains(err.Error(), "w9") || !strings.Contains(err.Error(), "after 300ms") || time.Since(start) < 250*time.Millisecond {
		t.Errorf("after %v: %v; want the wait to run out for w1, w9 not named", time.Since(start), err)
	}
	// A wanted node's broken agent still fails at once.
	cs = fake.NewClientset(mk("a1", "w1", waiting("CrashLoopBackOff")), mk("a2", "w2", ready))
	c.cs = cs
	if _, err := c.waitAgents(context.Background(), "w1", "w2"); err == nil || !strings.Contains(err.Error(), "CrashLoopBackOff") {
		t.Errorf("w1's agent crash-looping: %v", err)
	}
}

// A container that exited is fatal only where nothing restarts it: an
// agent (restartPolicy Always) between exit and restart is waited for.
func TestPodReadyExitedContainer(t *testing.T) {
	exited := corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}}}}
	for policy, fatal := range map[corev1.RestartPolicy]bool{corev1.RestartPolicyNever: true, corev1.RestartPolicyAlways: false, "": false} {
		p := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: policy}, Status: exited}
		ok, why := podReady(p)
		if ok || (fatalProblem([]string{why}) != "") != fatal {
			t.Errorf("restartPolicy %q: ready %v, %q; want fatal %v", policy, ok, why, fatal)
		}
	}
}

// Two nodes that report one boot ID run on one kernel (kind-style nodes
// on one machine): the engine says so, with the nodes named; distinct or
// unknown boot IDs say nothing.
func TestSharedKernel(t *testing.T) {
	withBoot := func(name, boot string) *corev1.Node {
		n := node(name, nil, true)
		n.Status.NodeInfo.BootID = boot
		return n
	}
	for _, tc := range []struct {
		srv, cli *corev1.Node
		shared   bool
	}{
		{withBoot("w1", "b-1"), withBoot("w2", "b-1"), true},
		{withBoot("w1", "b-1"), withBoot("w2", "b-2"), false},
		{withBoot("w1", ""), withBoot("w2", ""), false},
	} {
		shared, note := sharedKernel(Placement{Server: tc.srv, Client: tc.cli})
		if shared != tc.shared || (note != "") != tc.shared {
			t.Errorf("boot IDs %q, %q: shared %v, note %q", tc.srv.Status.NodeInfo.BootID, tc.cli.Status.NodeInfo.BootID, shared, note)
		}
		if shared && !strings.Contains(note, "server node w1 and the client node w2 report one boot ID (b-1)") {
			t.Errorf("note %q does not name the nodes and the boot ID", note)
		}
	}
}

// Without the agent's DaemonSet nothing will ever come up: the wait says
// so at once, with the install command, instead of after the timeout;
// with it, an agent not yet scheduled is waited for.
func TestWaitAgentsNotInstalled(t *testing.T) {
	c := &Cluster{cfg: Config{Timeout: time.Minute}.WithDefaults(), cs: fake.NewClientset(), poll: 20 * time.Millisecond}
	start := time.Now()
	_, err := c.waitAgents(context.Background(), "w1")
	if err == nil || !strings.Contains(err.Error(), "not installed: no DaemonSet cnibench-agent in namespace cnibench-agent") ||
		!strings.Contains(err.Error(), "cnibench kube install") || time.Since(start) > 10*time.Second {
		t.Errorf("after %v: %v; want at once the agent is not installed", time.Since(start), err)
	}
	cfg := Config{Timeout: 200 * time.Millisecond}.WithDefaults()
	c = &Cluster{cfg: cfg, cs: fake.NewClientset(cfg.AgentDaemonSet(nil)), poll: 20 * time.Millisecond}
	if _, err := c.waitAgents(context.Background(), "w1"); err == nil || !strings.Contains(err.Error(), "after 200ms") || !strings.Contains(err.Error(), "--agent-nodes") {
		t.Errorf("installed, no pod on w1 yet: %v; want the wait to run out naming the node selector", err)
	}
}

// TestObserveLeases: cleanup --kube judges another runner's Lease by
// this machine's clock while it watches it, never by the renewTime the
// runner's clock wrote. A live run whose runner's clock is 2 minutes
// behind (renewTime long past here) renews while watched and is kept; a
// dead one whose runner's clock was ahead (renewTime in the future) is
// not renewed and is stale. A runner that is a live process here is
// alive, unwatched; one not found here is watched all the same (/proc
// may hide it, or another machine have this one's name), and a Lease
// that cannot be read leaves its run unjudged, skipped.
func TestObserveLeases(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	lease := func(run, controller string, renew time.Time) *coordinationv1.Lease {
		return Config{RunID: run, Controller: controller}.WithDefaults().Lease(renew)
	}
	cs := fake.NewClientset(
		lease("skewed", "far/1/1", now.Add(-2*time.Minute)),
		lease("ahead", "far/2/2", now.Add(45*time.Second)),
		lease("localdead", "me/200/5", now),
		lease("localalive", "me/100/5", now.Add(-time.Hour)),
	)
	alive := func(pid int, _ uint64) bool { return pid == 100 }
	runs, err := ListRuns(ctx, cs, "cnibench", now)
	if err != nil {
		t.Fatal(err)
	}
	// By renewTime against this clock, the live run looks stale and the
	// dead one fresh: the judgment this test proves is not used.
	byAge := map[string]LeaseState{}
	for _, r := range runs {
		byAge[r.Run] = r.Lease
	}
	if byAge["skewed"] != LeaseStale || byAge["ahead"] != LeaseFresh {
		t.Fatalf("fixture: by age %v", byAge)
	}
	// A fake clock shared by the watching goroutines (each sleep moves
	// it); the live runner renews at each of its 10 s ticks.
	var mu sync.Mutex
	clk, last := now, now
	o := observer{poll: 2 * time.Second,
		now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clk },
		sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			clk = clk.Add(d)
			renew := clk.Sub(last) >= LeaseSeconds*time.Second/3
			if renew {
				last = clk
			}
			mu.Unlock()
			if renew {
				l, err := cs.CoordinationV1().Leases("cnibench").Get(ctx, leaseName("skewed"), metav1.GetOptions{})
				if err != nil {
					return err
				}
				rt := metav1.NewMicroTime(l.Spec.RenewTime.Add(10 * time.Second))
				l.Spec.RenewTime = &rt
				_, err = cs.CoordinationV1().Leases("cnibench").Update(ctx, l, metav1.UpdateOptions{})
				return err
			}
			return nil
		}}
	var said []string
	judged, err := observeLeases(ctx, cs, "cnibench", runs, "me", alive, func(s string) { said = append(said, s) }, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]LeaseState{}
	for _, r := range judged {
		got[r.Run] = r.Lease
	}
	want := map[string]LeaseState{"skewed": LeaseFresh, "ahead": LeaseStale, "localdead": LeaseStale, "localalive": LeaseFresh}
	for run, w := range want {
		if got[run] != w {
			t.Errorf("run %s judged %v, want %v", run, got[run], w)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "run ahead, localdead, skewed ") {
		t.Errorf("said %q, want one line naming the three watched runs", said)
	}
	stale, skipped := SelectStale(judged, "", false, "me", alive)
	var names []string
	for _, r := range stale {
		names = append(names, r.Run)
	}
	if strings.Join(names, ",") != "ahead,localdead" || !strings.Contains(skipped["skewed"], "renewed its Lease within the") ||
		!strings.Contains(skipped["localalive"], "live process of this machine") {
		t.Errorf("stale %v, skipped %v", names, skipped)
	}
	// A Lease gone unreadable (here: deleted between the list and the
	// watch reads as ended; a failed read as unjudged) leaves the run.
	failing := fake.NewClientset()
	failing.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd timeout")
	})
	judged, err = observeLeases(ctx, failing, "cnibench", runs[:1], "me", alive, func(string) {}, o)
	stale, skipped = SelectStale(judged, "", false, "me", alive)
	if err == nil || len(stale) != 0 || !strings.Contains(skipped[runs[0].Run], "could not judge") {
		t.Errorf("unreadable Lease: err %v, stale %v, skipped %v", err, stale, skipped)
	}
}
