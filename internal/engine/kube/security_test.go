package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cnibench/cnibench/internal/agent"
)

// The runner's rights in the agent's namespace are list pods and exec
// in them, and its kernel claims (Leases): no create on pods (a
// privileged pod there is root on a node), nothing on DaemonSets. In the
// workload namespace it creates pods, which Pod Security baseline keeps
// unprivileged.
func TestRBACRunnerCannotCreatePodsInAgentNamespace(t *testing.T) {
	cfg := Config{}.WithDefaults()
	var roleInAgentNS int
	for _, r := range cfg.AgentRole().Rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if res == "pods" && v != "list" {
					t.Errorf("agent-namespace Role grants %s pods", v)
				}
				if res != "pods" && res != "pods/exec" && (res != "leases" || !slices.Equal(r.APIGroups, []string{"coordination.k8s.io"})) {
					t.Errorf("agent-namespace Role grants %s %s", v, res)
				}
			}
		}
	}
	if cfg.AgentRole().Namespace != DefaultAgentNamespace {
		t.Errorf("agent Role in %s", cfg.AgentRole().Namespace)
	}
	for _, o := range cfg.RBAC("jane") {
		m, _ := metaOf(o)
		if m.GetNamespace() == cfg.AgentNamespace {
			roleInAgentNS++
		}
		if m.GetNamespace() == cfg.Namespace || m.GetName() == cfg.Namespace {
			if ns := cfg.WorkloadNamespaceObject(); ns.Labels[labelEnforce] != "baseline" {
				t.Errorf("workload namespace Pod Security %q", ns.Labels[labelEnforce])
			}
		}
	}
	if roleInAgentNS != 2 { // Role and RoleBinding
		t.Errorf("%d RBAC objects in the agent namespace, want the Role and its binding", roleInAgentNS)
	}
	for _, r := range cfg.Role().Rules {
		if slices.Contains(r.APIGroups, "apps") {
			t.Errorf("runner Role grants %v on %v", r.Verbs, r.Resources)
		}
	}
	if cfg.AgentNamespaceObject().Labels[labelEnforce] != "privileged" {
		t.Error("agent namespace not privileged")
	}
}

// Preflight checks what the Roles grant, and the Roles grant only what
// preflight checks (least privilege) but the optional rights named here
// with why: a right granted and never checked is one the runner holds
// without needing it, and one checked and not granted fails every run.
func TestPreflightAndRolesAgree(t *testing.T) {
	cfg := Config{}.WithDefaults()
	granted := map[string]bool{}
	grant := func(where string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						resource, sub, _ := strings.Cut(res, "/")
						names := r.ResourceNames
						if len(names) == 0 {
							names = []string{""}
						}
						for _, n := range names {
							granted[permission{group: g, resource: resource, sub: sub, verb: v, name: n}.String()+" "+where] = true
						}
					}
				}
			}
		}
	}
	grant("in namespace "+cfg.Namespace, cfg.Role().Rules)
	grant("in namespace "+cfg.AgentNamespace, cfg.AgentRole().Rules)
	grant("cluster-wide", cfg.ClusterRole().Rules)
	grant("in namespace "+DNSNamespace, cfg.DNSRole().Rules)
	const ws = "older API servers check it for exec's WebSocket upgrade; SPDY is the fallback"
	optional := map[string]string{
		"get pods/exec in namespace " + cfg.Namespace:                       ws,
		"get pods/exec in namespace " + cfg.AgentNamespace:                  ws,
		"list services in namespace " + DNSNamespace:                        "is cluster DNS up; without it the lookup from a pod decides",
		"list endpointslices.discovery.k8s.io in namespace " + DNSNamespace: "is cluster DNS up, as above",
	}
	for _, n := range daemonSetNames() {
		optional["list daemonsets.apps named "+n+" cluster-wide"] = "CNI detection's clue, or why a tainted node has no agent; without it fewer"
	}
	checked := map[string]bool{}
	// kernelPermissions are checked where the run's nodes share a kernel.
	for _, p := range append(slices.Clone(permissions), kernelPermissions...) {
		k := p.String() + " " + p.where(cfg)
		checked[k] = true
		if !granted[k] {
			t.Errorf("preflight checks %s, which no Role grants", k)
		}
	}
	// CNI detection's optional reads are checked too, for a note.
	for _, p := range optionalPermissions() {
		k := p.String() + " " + p.where(cfg)
		if !granted[k] || checked[k] {
			t.Errorf("optional %s: granted %v, required %v", k, granted[k], checked[k])
		}
		checked[k] = true
	}
	for k := range granted {
		if !checked[k] && optional[k] == "" {
			t.Errorf("the Roles grant %s, which preflight does not check: a run does not need it", k)
		}
	}
	for k := range optional {
		if !granted[k] || checked[k] {
			t.Errorf("optional %s: granted %v, checked %v; drop it from this list", k, granted[k], checked[k])
		}
	}
}

func TestNamespaceRefused(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Namespace: "default"}, "--namespace default: cnibench needs a namespace of its own"},
		{Config{Namespace: "kube-system"}, "--namespace kube-system"},
		{Config{AgentNamespace: "kube-system"}, "--agent-namespace kube-system"},
		{Config{Namespace: "bench", AgentNamespace: "bench"}, "both \"bench\""},
		// Not DNS-1123 labels: the API server refused them only after
		// an install had begun.
		{Config{Namespace: "Bench"}, `--namespace "Bench": not a namespace name`},
		{Config{AgentNamespace: "bench agent"}, `--agent-namespace "bench agent": not a namespace name`},
		{Config{Namespace: strings.Repeat("a", 64)}, "--namespace"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		if !errors.Is(err, ErrBadNamespace) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if err := (Config{Namespace: "kubeflow"}).WithDefaults().Validate(); err != nil {
		t.Errorf("kubeflow refused: %v", err)
	}
}

func TestCheckDigest(t *testing.T) {
	ok := "r.example/cnibench@sha256:" + strings.Repeat("0f", 32)
	if err := CheckDigest(ok); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"r.example/cnibench:v1", "r.example/cnibench@sha256:abc", "r.example/cnibench@sha256:" + strings.Repeat("G", 64)} {
		if CheckDigest(bad) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// The runner refuses an agent of another version, in one line naming
// both.
func TestHandshakeRefusesOtherVersion(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := agent.NewServer(agent.Config{Run: "r1", FS: newMemFS(), JournalDir: t.TempDir()})
	go func() { srv.Serve(inR, outW); outW.Close() }()
	c := agent.NewClient(inW, outR)
	c.SetRun("r1")
	defer c.Close()
	err := handshake(c, "v9.9.9")
	if !errors.Is(err, ErrAgentVersion) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "its agent is cnibench dev, this runner is cnibench v9.9.9") {
		t.Fatalf("handshake: %v", err)
	}
	if err := handshake(c, "dev"); err != nil {
		t.Fatalf("same version refused: %v", err)
	}
}

// Liveness is each run's own Lease: a fresh one keeps its run even when
// another run's objects (listed later) name a dead controller, a stale
// one marks its run dead even when its objects name a live controller.
func TestLeaseLiveness(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(run string, renewed time.Time) *coordinationv1.Lease {
		cfg := Config{RunID: run, Controller: "me/1/1"}.WithDefaults()
		return cfg.Lease(renewed)
	}
	fresh := Config{RunID: "fresh", Controller: "me/200/5"}.WithDefaults() // pid 200: dead here
	stale := Config{RunID: "stale", Controller: "me/100/5"}.WithDefaults() // pid 100: alive here
	noLease := Config{RunID: "old", Controller: "me/200/5"}.WithDefaults()
	cs := fake.NewClientset(
		lease("fresh", now.Add(-5*time.Second)), fresh.ServerPod(0, "w1"),
		lease("stale", now.Add(-(LeaseSeconds+1)*time.Second)), stale.ServerPod(0, "w1"),
		noLease.ServerPod(0, "w1"),
	)
	runs, err := ListRuns(context.Background(), cs, "cnibench", now)
	if err != nil {
		t.Fatal(err)
	}
	byRun := map[string]RunInfo{}
	for _, r := range runs {
		byRun[r.Run] = r
	}
	if byRun["fresh"].Lease != LeaseFresh || byRun["stale"].Lease != LeaseStale || byRun["old"].Lease != LeaseNone {
		t.Fatalf("lease states: %+v", runs)
	}
	alive := func(pid int, _ uint64) bool { return pid == 100 }
	got, skipped := SelectStale(runs, "", false, "me", alive)
	var names []string
	for _, r := range got {
		names = append(names, r.Run)
	}
	if strings.Join(names, ",") != "old,stale" {
		t.Errorf("stale runs %v (skipped %v), want old (no Lease, controller dead here) and stale", names, skipped)
	}
	if !strings.Contains(skipped["fresh"], "its Lease was renewed 5s ago") {
		t.Errorf("fresh: %q", skipped["fresh"])
	}
	// A renewal moves the Lease forward.
	cfg := Config{RunID: "stale", Controller: "me/1/1"}.WithDefaults()
	if err := renewLease(cs, cfg); err != nil {
		t.Fatal(err)
	}
	l, _ := cs.CoordinationV1().Leases("cnibench").Get(context.Background(), "cnb-stale", metav1.GetOptions{})
	if time.Since(l.Spec.RenewTime.Time) > time.Minute {
		t.Errorf("renewal did not move RenewTime: %v", l.Spec.RenewTime)
	}
}

// forbiddenExec refuses every exec, as an API server does for a runner
// without create on pods/exec.
type forbiddenExec struct{}

func (forbiddenExec) Exec(_ context.Context, ns, pod, _ string, _ []string, _ io.Reader, _, _ io.Writer) error {
	return fmt.Errorf("exec in pod %s/%s: pods %q is forbidden: User \"jane\" cannot create resource \"pods/exec\"", ns, pod, pod)
}

// An agent session the API refuses fails preflight with the refusal,
// once, the node named once, and no closed pipe.
func TestPreflightSaysWhyTheAgentSessionFailed(t *testing.T) {
	cfg := Config{RunID: "r9"}.WithDefaults()
	cs, place := kubeFixture(t, cfg)
	_, err := preflightNodes(context.Background(), forbiddenExec{}, cs, cfg, place, nil, pinReads{})
	if err == nil {
		t.Fatal("preflight passed with exec forbidden")
	}
	msg := err.Error()
	if want := "node w1: reach its agent: "; !strings.HasPrefix(msg, want) || strings.Count(msg, "w1") != 1 ||
		strings.Count(msg, "is forbidden") != 1 || strings.Count(msg, "agent session") > 1 || strings.Contains(msg, "closed pipe") || strings.Contains(msg, "  ") || strings.Contains(msg, "\n") {
		t.Errorf("preflight: %q, want it to start %q and say the refusal once, the node once", msg, want)
	}
	t.Log(msg)
}

// A run is refused at preflight while another run's Lease is fresh,
// naming it and what to do; a stale Lease or a run without one (its
// runner dead) is not live: checkLeftBehind refuses their objects, with
// the cleanup that removes them.
func TestCheckNoLiveRun(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	other := Config{RunID: "other", Controller: "host-b/42/7"}.WithDefaults()
	stale := Config{RunID: "stale", Controller: "me/1/1"}.WithDefaults()
	cs := fake.NewClientset(stale.Lease(now.Add(-(LeaseSeconds + 1) * time.Second)))
	if err := checkNoLiveRun(context.Background(), cs, "cnibench", now); err != nil {
		t.Errorf("only a stale Lease: %v", err)
	}
	cs = fake.NewClientset(stale.Lease(now.Add(-(LeaseSeconds+1)*time.Second)), other.Lease(now.Add(-3*time.Second)))
	err := checkNoLiveRun(context.Background(), cs, "cnibench", now)
	if err == nil || !strings.Contains(err.Error(), "run other is measuring on this cluster (namespace cnibench; its runner host-b/42/7 renewed its Lease 3s ago, by its clock against this machine's)") {
		t.Errorf("a fresh Lease: %v", err)
	}
	if err := checkNoLiveRun(context.Background(), cs, "elsewhere", now); err != nil {
		t.Errorf("another namespace: %v", err)
	}
}
