package ab

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/workloadtest"
)

// requireNginx returns nginx's path, skipping the test where nginx is
// missing or the test is not root (nginx's workers switch to nobody).
func requireNginx(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/nginx"); err != nil {
			t.Skip("skipped: nginx is not installed (apt-get install nginx-light)")
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: nginx's workers switch to nobody, which needs root")
	}
	return bin
}

// Serve (what `cnibench agent nginx` runs in a kube server pod) serves
// the body until its context ends, then leaves no site behind.
func TestServe(t *testing.T) {
	bin := requireNginx(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	var mu sync.Mutex
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, bin, addr, 12345, lockedWriter{&mu, &log}) }()
	var body []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + BodyPath)
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("nginx never answered: %v; log: %s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(body) != 12345 {
		t.Errorf("body of %d bytes, want 12345", len(body))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	if len(after) > len(before) {
		t.Errorf("site left behind: %v", after)
	}
	// nginx that cannot start is an error, with its words.
	mu.Lock()
	log.Reset()
	mu.Unlock()
	err = Serve(context.Background(), bin, "203.0.113.77:1", 10, lockedWriter{&mu, &log})
	if err == nil || !strings.Contains(log.String(), "203.0.113.77") {
		t.Errorf("nginx on an address it cannot bind: %v; log %q", err, log.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// helperPod is a kube-like pod: its own filesystem, so nginx's site is
// written by the cnibench helper in it.
type helperPod struct{ *workloadtest.RecPod }

func (helperPod) HelperArgv(args ...string) []string {
	return append([]string{"/usr/local/bin/cnibench", "agent"}, args...)
}

// On a pod with its own filesystem the driver writes no site here: the
// helper in the pod serves on the pod's address, and ab fetches from the
// address clients are given.
func TestRunInPodWithOwnFilesystem(t *testing.T) {
	out, err := os.ReadFile("testdata/c1-1M.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := helperPod{&workloadtest.RecPod{PodName: "srv", Address: "srv.cnibench.svc.cluster.local", PodIP: net.IPv4(10, 244, 1, 5), Front: net.IPv4(10, 96, 0, 9)}}
	cli := helperPod{&workloadtest.RecPod{PodName: "cli", PodIP: net.IPv4(10, 244, 2, 5), Front: net.IPv4(10, 96, 0, 9), Reply: out}}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	tr := workload.Trial{Pairs: []workload.Pair{{Server: srv, Client: cli}}, Spec: study.Workload{Tool: "ab", Size: "1M", Concurrency: []int{1}},
		Duration: 2 * time.Second, Warmup: time.Second, BasePort: 5201}
	res, err := New().Run(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics[MetricRPS] <= 0 {
		t.Errorf("metrics %v", res.Metrics)
	}
	want := []string{"/usr/local/bin/cnibench", "agent", "nginx", "--listen", "10.244.1.5:5201", "--size", "1048576", "--nginx", "nginx"}
	if len(srv.Argvs()) != 1 || !slices.Equal(srv.Argvs()[0], want) {
		t.Errorf("server argv %q, want %q", srv.Argvs(), want)
	}
	for _, a := range cli.Argvs() {
		if a[len(a)-1] != "http://srv.cnibench.svc.cluster.local:5201/body" {
			t.Errorf("ab fetches %s", a[len(a)-1])
		}
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "cnb-http-*"))
	if len(after) > len(before) {
		t.Errorf("a site was written on this machine: %v", after)
	}
}

// An ab that cannot open a socket per concurrent request (real output of
// ab -c 1100 under an open-file limit of 1024) fails the trial with what
// ab printed and why, not with a missing summary line.
func TestRunSaysWhatABPrinted(t *testing.T) {
	srv := helperPod{&workloadtest.RecPod{PodName: "srv", PodIP: net.IPv4(10, 244, 1, 5)}}
	cli := &workloadtest.RecPod{PodName: "cli", PodIP: net.IPv4(10, 244, 2, 5), Reply: read(t, "err-files.txt")}
	tr := workload.Trial{Pairs: []workload.Pair{{Server: srv, Client: cli}}, Spec: study.Workload{Tool: "ab", Size: "1M", Concurrency: []int{1100}},
		Duration: 2 * time.Second, BasePort: 5201}
	_, err := New().Run(context.Background(), tr)
	if !errors.Is(err, ErrOpenFiles) {
		t.Fatalf("got %v, want %v", err, ErrOpenFiles)
	}
	for _, want := range []string{"pair 0 (cli -> srv): ab: socket: Too many open files (24)", "open-file limit (RLIMIT_NOFILE)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "lacks") {
		t.Errorf("%q blames a missing summary line", err)
	}
}
