package kube

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/cnibench/cnibench/internal/engine"
)

// TestCheckResumedGone: a --resume of a run whose runner was killed
// (kill -9: no teardown) while its pods, Services and Lease are still in
// the namespace is refused, naming them and `cnibench cleanup --kube
// --run ID`: it went on beside them without a word. After the cleanup a
// resume, or a new run, goes on; a live run's objects are
// checkNoLiveRun's to refuse, not this check's.
func TestCheckResumedGone(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	// No kubeconfig file: the command names no --kubeconfig.
	cfg := Config{Kubeconfig: filepath.Join(t.TempDir(), "none"), Context: "ci"}.WithDefaults()
	dead := Config{RunID: "old1", Controller: "elsewhere/7/7"}.WithDefaults()
	live := Config{RunID: "live"}.WithDefaults()
	cs := fake.NewClientset(dead.Lease(now.Add(-(LeaseSeconds+60)*time.Second)), dead.ServerPod(0, "w1"), dead.ServerService(0),
		dead.ClientPod(0, "w2"), live.Lease(now.Add(-5*time.Second)), live.ServerPod(0, "w1"))
	ctx := context.Background()
	err := checkLeftBehind(ctx, cs, cfg, []string{"old1"}, now)
	for _, want := range []string{
		"--resume: the interrupted run old1 left 4 objects in namespace cnibench (lease/cnb-old1, pod/cnb-old1-cli-0, pod/cnb-old1-srv-0, service/cnb-old1-srv-0)",
		"remove them first with `cnibench cleanup --kube --run old1 --context ci`",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a resume beside the dead run's objects: %v; want it refused saying %q", err, want)
		}
	}
	if _, err := DeleteRun(ctx, cs, "cnibench", "old1", true); err != nil {
		t.Fatal(err)
	}
	if err := checkLeftBehind(ctx, cs, cfg, []string{"old1"}, now); err != nil {
		t.Errorf("after cleanup: %v", err)
	}
	if err := checkLeftBehind(ctx, cs, cfg, []string{"gone2"}, now); err != nil {
		t.Errorf("a resume of a run that left nothing: %v", err)
	}
	if err := checkLeftBehind(ctx, cs, cfg, nil, now); err != nil {
		t.Errorf("a new run: %v", err)
	}
	// The command reaches the namespaces the run used.
	cfg.Namespace, cfg.AgentNamespace = "bench", "bench-agent"
	if got := strings.Join(cleanupRunWords(cfg, "old1"), " "); got != "cnibench cleanup --kube --run old1 --context ci --namespace bench --agent-namespace bench-agent" {
		t.Errorf("cleanup command %q", got)
	}
}

// TestCheckResumedGoneEveryPart: a run resumed more than once has parts
// of their own run IDs (env.json's run_ids). A resumed part killed after
// its Lease and pods were made, before its first cluster rewrote
// env.json, left them under its ID while env.json's run_id still named
// the earlier part: a resume checking that one alone went on beside
// them. Each part's objects are refused, each part's cleanup named.
func TestCheckResumedGoneEveryPart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := Config{Kubeconfig: filepath.Join(t.TempDir(), "none"), Context: "ci"}.WithDefaults()
	first := Config{RunID: "old1"}.WithDefaults()
	part := Config{RunID: "part2", Controller: "elsewhere/8/8"}.WithDefaults()
	cs := fake.NewClientset(part.Lease(now.Add(-(LeaseSeconds+60)*time.Second)), part.ServerPod(0, "w1"))
	ctx := context.Background()
	parts := []string{"old1", "part2", "part3"}
	err := checkLeftBehind(ctx, cs, cfg, parts, now)
	want := "--resume: the interrupted run part2 left 2 objects in namespace cnibench (lease/cnb-part2, pod/cnb-part2-srv-0)"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "`cnibench cleanup --kube --run part2 --context ci`") {
		t.Errorf("a resume beside a later part's objects: %v; want it refused saying %q and naming its cleanup", err, want)
	}
	if _, err := cs.CoreV1().Pods("cnibench").Create(ctx, first.ClientPod(0, "w2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = checkLeftBehind(ctx, cs, cfg, parts, now)
	for _, want := range []string{
		"--resume: 2 parts of the interrupted run left objects in namespace cnibench: run old1 left 1 object (pod/cnb-old1-cli-0); run part2 left 2 objects",
		"remove them first with `cnibench cleanup --kube --run old1 --context ci` and `cnibench cleanup --kube --run part2 --context ci`",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a resume beside two parts' objects: %v; want it refused saying %q", err, want)
		}
	}
	for _, id := range []string{"old1", "part2"} {
		if _, err := DeleteRun(ctx, cs, "cnibench", id, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkLeftBehind(ctx, cs, cfg, parts, now); err != nil {
		t.Errorf("after both cleanups: %v", err)
	}
}

// The engine's preflight makes the check for the run a --resume
// continues (engine.Needs.Resumes), before anything is made.
func TestEnginePreflightRefusesResumeBesideLeftovers(t *testing.T) {
	now := time.Now()
	dead := Config{RunID: "old1", Controller: "elsewhere/7/7"}.WithDefaults()
	cs := fake.NewClientset(namespace("cnibench"), node("w1", map[string]string{"iperf": "server"}, true), node("w2", map[string]string{"iperf": "client"}, true),
		dead.Lease(now.Add(-(LeaseSeconds+60)*time.Second)), dead.ServerPod(0, "w1"))
	allowAll(cs)
	e := NewEngine(&Config{Kubeconfig: filepath.Join(t.TempDir(), "none")})
	e.cs, e.rc = cs, &rest.Config{Host: "http://127.0.0.1:1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := e.Preflight(ctx, stubStudy(t, "[{tool: iperf3}]"), engine.Needs{Resumes: []string{"old1"}})
	if err == nil || !strings.Contains(err.Error(), "cnibench cleanup --kube --run old1") {
		t.Errorf("preflight of a resume beside run old1's objects: %v; want it refused naming the cleanup", err)
	}
}
