package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/cnibench/cnibench/internal/engine"
)

// TestCheckLeftBehindNewRun: a new run (not a --resume) beside the
// objects of runs whose runners are gone (one killed with -9, its Lease
// stale; one with labelled pods and no Lease) went on without a word,
// their idle servers sharing the nodes with its trials. It is refused,
// naming each run, a few of its objects and its cleanup; a live run's
// objects are left to checkNoLiveRun, and once the dead runs are
// cleaned up the run goes on.
func TestCheckLeftBehindNewRun(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := Config{Kubeconfig: filepath.Join(t.TempDir(), "none"), Context: "ci"}.WithDefaults()
	dead := Config{RunID: "dead1", Controller: "elsewhere/7/7"}.WithDefaults()
	bare := Config{RunID: "bare", Controller: "elsewhere/9/9"}.WithDefaults()
	live := Config{RunID: "live", Controller: "elsewhere/8/8"}.WithDefaults()
	objs := []runtime.Object{dead.Lease(now.Add(-(LeaseSeconds + 60) * time.Second)), bare.ServerPod(0, "w1"),
		live.Lease(now.Add(-5 * time.Second)), live.ServerPod(0, "w1")}
	for i := range 4 {
		objs = append(objs, dead.ServerPod(i, "w1"), dead.ServerService(i))
	}
	cs := fake.NewClientset(objs...)
	ctx := context.Background()
	err := checkLeftBehind(ctx, cs, cfg, nil, now)
	for _, want := range []string{
		"2 runs left objects in namespace cnibench: run bare (no Lease) left 1 object (pod/cnb-bare-srv-0); " +
			"run dead1 (its Lease last renewed 1m30s ago, by its runner's clock against this machine's) left 9 objects " +
			"(lease/cnb-dead1, pod/cnb-dead1-srv-0, pod/cnb-dead1-srv-1, pod/cnb-dead1-srv-2, pod/cnb-dead1-srv-3, service/cnb-dead1-srv-0, and 3 more)",
		"remove them first with `cnibench cleanup --kube --run bare --context ci` and `cnibench cleanup --kube --run dead1 --context ci`, then run again",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a new run beside two dead runs' objects: %v; want it refused saying %q", err, want)
		}
	}
	if err != nil && (strings.HasPrefix(err.Error(), "--resume") || strings.Contains(err.Error(), "run live")) {
		t.Errorf("a new run's refusal %q speaks of a resume or names the live run", err)
	}
	if _, err := DeleteRun(ctx, cs, "cnibench", "bare", true); err != nil {
		t.Fatal(err)
	}
	err = checkLeftBehind(ctx, cs, cfg, nil, now)
	want := "run dead1 (its Lease last renewed 1m30s ago, by its runner's clock against this machine's) left 9 objects in namespace cnibench " +
		"(lease/cnb-dead1, pod/cnb-dead1-srv-0, pod/cnb-dead1-srv-1, pod/cnb-dead1-srv-2, pod/cnb-dead1-srv-3, service/cnb-dead1-srv-0, and 3 more): " +
		"its runner ended without its teardown"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "remove them first with `cnibench cleanup --kube --run dead1 --context ci`, then run again") {
		t.Errorf("a new run beside a dead run's objects: %v; want it refused saying %q and naming its cleanup", err, want)
	}
	if _, err := DeleteRun(ctx, cs, "cnibench", "dead1", true); err != nil {
		t.Fatal(err)
	}
	if err := checkLeftBehind(ctx, cs, cfg, nil, now); err != nil {
		t.Errorf("beside a live run's objects only: %v", err)
	}
}

// A --resume is refused beside another dead run's objects as a new run
// is, and says which run is a part of the interrupted one.
func TestCheckLeftBehindResumeBesideAnother(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := Config{Kubeconfig: filepath.Join(t.TempDir(), "none"), Context: "ci"}.WithDefaults()
	other := Config{RunID: "zzz"}.WithDefaults()
	part := Config{RunID: "old1"}.WithDefaults()
	cs := fake.NewClientset(other.Lease(now.Add(-(LeaseSeconds+1)*time.Second)), other.ClientPod(0, "w2"))
	ctx := context.Background()
	err := checkLeftBehind(ctx, cs, cfg, []string{"old1"}, now)
	want := "--resume: run zzz (its Lease last renewed 31s ago, by its runner's clock against this machine's) left 2 objects in namespace cnibench (lease/cnb-zzz, pod/cnb-zzz-cli-0)"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "`cnibench cleanup --kube --run zzz --context ci`, then resume again") {
		t.Errorf("a resume beside another dead run's objects: %v; want it refused saying %q and naming its cleanup", err, want)
	}
	cs = fake.NewClientset(other.Lease(now.Add(-(LeaseSeconds+1)*time.Second)), part.ServerPod(0, "w1"))
	err = checkLeftBehind(ctx, cs, cfg, []string{"old1"}, now)
	want = "--resume: 2 runs left objects in namespace cnibench: run old1 (a part of the interrupted run) left 1 object (pod/cnb-old1-srv-0); run zzz (its Lease"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a resume beside its own and another run's objects: %v; want it refused saying %q", err, want)
	}
}

// The engine's preflight refuses a new run beside a dead run's objects,
// naming its cleanup, and beside a live run's with checkNoLiveRun's
// message, as before.
func TestEnginePreflightRefusesNewRunBesideLeftovers(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		renew time.Time
		want  string
	}{
		{"dead", now.Add(-(LeaseSeconds + 60) * time.Second), "then run again"},
		{"live", now.Add(-2 * time.Second), "run old1 is measuring on this cluster"},
	} {
		run := Config{RunID: "old1", Controller: "elsewhere/7/7"}.WithDefaults()
		cs := fake.NewClientset(namespace("cnibench"), node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true),
			run.Lease(tc.renew), run.ServerPod(0, "w1"))
		allowAll(cs)
		e := NewEngine(&Config{Kubeconfig: filepath.Join(t.TempDir(), "none")})
		e.cs, e.rc = cs, &rest.Config{Host: "http://127.0.0.1:1"}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := e.Preflight(ctx, stubStudy(t, "[{tool: iperf3}]"), engine.Needs{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("preflight of a new run beside %s run old1's objects: %v; want it refused saying %q", tc.name, err, tc.want)
		}
	}
}
