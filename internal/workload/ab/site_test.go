package ab

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/spec"
)

func TestSite(t *testing.T) {
	s, err := newSite("10.0.0.1:8080", 100000, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(s.Dir, "www", "body"))
	if err != nil || st.Size() != 100000 {
		t.Fatalf("body: %v %v", st, err)
	}
	conf, _ := os.ReadFile(filepath.Join(s.Dir, "nginx.conf"))
	for _, want := range []string{"listen 10.0.0.1:8080", "daemon off;", "pid " + s.Dir + "/nginx.pid", "access_log off;"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q", want)
		}
	}
	if got := strings.Join(s.argv("nginx"), " "); !strings.HasPrefix(got, "nginx -e "+s.Dir) {
		t.Errorf("argv %s", got)
	}
	if err := s.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Error("site directory left behind")
	}
}

// The sites of one trial share the first one's body (a hard link): 250
// servers of a 64 MiB body wrote 16 GiB every trial. It outlives the
// first site, and a body that cannot be linked is written.
func TestSitesShareBody(t *testing.T) {
	a, err := newSite("10.0.0.1:8080", 100000, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newSite("10.0.0.2:8080", 100000, a.body())
	if err != nil {
		t.Fatal(err)
	}
	defer b.remove()
	sa, _ := os.Stat(a.body())
	sb, err := os.Stat(b.body())
	if err != nil || !os.SameFile(sa, sb) {
		t.Fatalf("second site's body %v (%v) is not the first's", sb, err)
	}
	if err := a.remove(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(b.body()); err != nil || st.Size() != 100000 {
		t.Errorf("body after the first site went: %v %v", st, err)
	}
	c, err := newSite("10.0.0.3:8080", 100000, filepath.Join(t.TempDir(), "gone"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.remove()
	if st, err := os.Stat(c.body()); err != nil || st.Size() != 100000 {
		t.Errorf("body not linked, not written: %v %v", st, err)
	}
}

func TestPlanAndArgv(t *testing.T) {
	d := New()
	tr := workload.Trial{Pairs: make([]workload.Pair, 1), Duration: 12 * time.Second, Warmup: 2 * time.Second,
		Spec: study.Workload{Tool: "ab", Size: "5M", Concurrency: []int{50}}}
	p, err := d.plan(tr)
	if err != nil {
		t.Fatal(err)
	}
	if p.size != 5<<20 || p.conc != 50 || p.warm != 2 || p.measured != 10 {
		t.Errorf("plan %+v", p)
	}
	got := strings.Join(d.abArgv(p, "http://10.0.0.1:8080/body", 10, p.requestLimit(10, true)), " ")
	if got != "ab -q -c 50 -t 10 -n 500000 -s 30 -r -e /dev/stdout http://10.0.0.1:8080/body" {
		t.Errorf("ab argv %s", got)
	}
	// A request count bounds the measured run, not the warm-up.
	tr.Spec.Requests = 2000
	if p, err = d.plan(tr); err != nil {
		t.Fatal(err)
	}
	if p.requestLimit(10, true) != 2000 || p.requestLimit(2, false) != 100000 {
		t.Errorf("ab -n measured %d, warm-up %d; want 2000 and 100000", p.requestLimit(10, true), p.requestLimit(2, false))
	}
	res := result([]*Report{{Complete: 1500}, {Complete: 2000}}, 2000)
	if res.Metrics[MetricTarget] != 4000 || res.Metrics[MetricRequests] != 3500 {
		t.Errorf("requests %v of target %v; want 3500 of 4000 (summed over pairs)", res.Metrics[MetricRequests], res.Metrics[MetricTarget])
	}
}

// TestRequestsBadInput: a request count below the concurrency (ab refuses
// -c above -n) or out of bounds is refused at its field.
func TestRequestsBadInput(t *testing.T) {
	const base = "apiVersion: cnibench/v1alpha1\nkind: Study\nmetadata: {name: a}\nspec:\n  tunings: [baseline]\n" +
		"  replicas: [1]\n  duration: 3s\n  trials: 1\n  datapaths: [bridge]\n  workloads:\n"
	cat := study.Catalog{Datapaths: []string{"bridge"}, Tools: []spec.Tool{New().Describe()}}
	for _, c := range []struct{ w, want string }{
		{"{tool: ab, concurrency: [1, 50], requests: 10}", "a.yaml:11: spec.workloads[0].concurrency[1]: 50 requests in flight is more than the 10 requests"},
		{"{tool: ab, requests: -1}", "spec.workloads[0].requests: requests must be between 1 and 10000000"},
	} {
		_, err := study.Parse("a.yaml", []byte(base+"    - "+c.w+"\n"), study.Options{}, cat)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.w, err, c.want)
		}
	}
	if _, err := study.Parse("a.yaml", []byte(base+"    - {tool: ab, concurrency: [1, 50], requests: 500000}\n"), study.Options{}, cat); err != nil {
		t.Errorf("the paper's 500K requests: %v", err)
	}
}

// nginx's worker takes every connection ab may open: worker_connections
// above ab's concurrency, and an open-file limit for a socket and the
// body's file each (up to the hard limit it inherits), raised by the
// worker itself from the low soft limit (1024 here) it would otherwise
// keep and refuse connections at (accept4: Too many open files). A real
// nginx, as root.
func TestNginxWorkerOpenFiles(t *testing.T) {
	bin := requireNginx(t)
	if workerConns <= MaxConcurrency || workerFiles < 2*workerConns {
		t.Fatalf("worker_connections %d, worker_rlimit_nofile %d for ab -c up to %d", workerConns, workerFiles, MaxConcurrency)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, err := newSite(addr, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.remove()
	argv := s.argv(bin)
	// A low soft limit under the hard one, as a login shell's or a
	// service's (Go raises its own, not its children's).
	cmd := exec.Command("sh", append([]string{"-c", `ulimit -Sn 1024 && exec "$@"`, "sh"}, argv...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The worker holds the output pipe too: a master that is gone
	// must not keep Wait reading it.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// SIGTERM: nginx's fast shutdown ends the worker with the master.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	// The worker sets its limit as it starts: wait for it to be read
	// above what it inherited, or for the deadline.
	soft := 0
	for deadline := time.Now().Add(10 * time.Second); soft <= 1024 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if w := childOf(cmd.Process.Pid); w > 0 {
			soft = openFilesLimit(w)
		}
	}
	if soft == 0 {
		t.Fatalf("no nginx worker; output %s; log %s", out.String(), s.errorLog())
	}
	if want := siteFiles(); soft != want || s.Files != want {
		t.Errorf("worker's open-file limit %d, want %d (worker_rlimit_nofile %d); log %s", soft, want, s.Files, s.errorLog())
	}
	if log := s.errorLog(); strings.Contains(log, "setrlimit") {
		t.Errorf("nginx could not set its limit: %s", log)
	}
}

// childOf is a child process of pid, 0 if none.
func childOf(pid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ") ".
		_, rest, _ := strings.Cut(string(b), ") ")
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			return child
		}
	}
	return 0
}

// openFilesLimit is the soft "Max open files" of process pid.
func openFilesLimit(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}
