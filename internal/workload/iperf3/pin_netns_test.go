package iperf3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/topology"
	"github.com/cnibench/cnibench/internal/workload"
)

// cpusAllowed reads Cpus_allowed_list of a process (taskset -cp PID).
func cpusAllowed(pid int) (string, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no Cpus_allowed_list")
}

// readTopology reads this machine's CPU topology; it skips only where
// sysfs has no CPUs to read.
func readTopology(t *testing.T) topology.Topology {
	t.Helper()
	topo, err := topology.Read("/sys")
	if err != nil {
		if _, serr := os.Stat("/sys/devices/system/cpu"); serr != nil {
			t.Skipf("skipped: no sysfs CPUs: %v", serr)
		}
		t.Fatal(err)
	}
	return topo
}

// A placement name is resolved from this machine's topology and the
// started server and client run on exactly the CPUs it resolved to, read
// from /proc/PID/status while the trial runs. other-core is used because
// it exists on any machine with two cores (same-numa and other-numa need
// two NUMA nodes and are refused on one; see TestPrepareRefuses).
func TestPinByNameRunsThere(t *testing.T) {
	client, server := podPair(t)
	topo := readTopology(t)
	w := study.Workload{Name: "pinned", Tool: "iperf3", Protocol: "tcp", Placement: study.PlacementInterNode,
		Pin: &study.Pin{Server: topology.OtherCore}}
	prep, err := workload.Prepare([]study.Workload{w}, workload.Machine{Topology: topo}, nil)
	if errors.Is(err, topology.ErrNotPossible) {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	run := prep.Apply(w)
	t.Logf("%s; server %q client %q", prep.Notes, run.Pin.Server, run.Pin.Client)
	if run.Pin.Server == "" || run.Pin.Client == "" || run.Pin.Server == run.Pin.Client {
		t.Fatalf("resolved to server %q client %q", run.Pin.Server, run.Pin.Client)
	}
	tr := trial(workload.Pair{Server: server, Client: client})
	tr.Spec = run
	seen := map[string][]string{}
	var mu sync.Mutex
	look := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range []nsPod{server, client} {
			for _, pid := range pidsIn(t, p.ns) {
				// Only iperf3 itself: a process caught between fork and
				// taskset's exec still has the parent's CPUs.
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				if strings.TrimSpace(string(comm)) != "iperf3" {
					continue
				}
				if cpus, err := cpusAllowed(pid); err == nil {
					seen[p.ns] = append(seen[p.ns], cpus)
				}
			}
		}
	}
	// Look from the start of the trial until it ends, every 100 ms: one
	// look at Started may come before a loaded machine has exec'd iperf3.
	done := make(chan struct{})
	var wg sync.WaitGroup
	tr.Started = func(time.Time) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				look()
				select {
				case <-done:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	_, err = New().Run(context.Background(), tr)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkNoProcesses(t, client, server)
	for _, c := range []struct {
		pod  nsPod
		want string
	}{{server, run.Pin.Server}, {client, run.Pin.Client}} {
		if len(seen[c.pod.ns]) == 0 {
			t.Errorf("no process seen in %s", c.pod.ns)
		}
		for _, got := range seen[c.pod.ns] {
			if got != c.want {
				t.Errorf("a process in %s runs on CPUs %s, want %s", c.pod.ns, got, c.want)
			}
		}
	}
	t.Logf("seen %v", seen)
}
