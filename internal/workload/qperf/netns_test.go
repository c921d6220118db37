package qperf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/proc"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload"
	"github.com/cnibench/cnibench/internal/workload/sockperf"
)

// nsPod is the smallest engine.Pod: a named network namespace.
type nsPod struct {
	ns string
	ip net.IP
}

func (p nsPod) Name() string { return p.ns }
func (p nsPod) Node() string { return "local" }
func (p nsPod) IP() net.IP   { return p.ip }
func (p nsPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, p.ns, nil, argv)
}

// podPair builds two throw-away namespaces joined by a veth pair
// (ip netns add; ip link add eth0 type veth peer name eth0 netns B) and
// returns the client and server pods. Cleanup deletes both namespaces,
// which deletes the veth pair with them.
func podPair(t *testing.T) (client, server nsPod) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: creating network namespaces needs root")
	}
	if err := New().Check(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	b := make([]byte, 4)
	rand.Read(b)
	base := "cnbtest-" + hex.EncodeToString(b)
	client = nsPod{ns: base + "-c", ip: net.IPv4(10, 252, 0, 1)}
	server = nsPod{ns: base + "-s", ip: net.IPv4(10, 252, 0, 2)}
	for _, p := range []nsPod{client, server} {
		if err := netns.Add(p.ns); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := netns.Delete(p.ns); err != nil {
				t.Error(err)
			}
		})
	}
	hc, err := netns.Handle(client.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	hs, err := netns.Handle(server.ns)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	la := netlink.NewLinkAttrs() // not a literal: that would set txqueuelen 0
	la.Name = "eth0"
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(hs.NsFd())}
	if err := hc.LinkAdd(veth); err != nil {
		t.Fatalf("ip link add eth0 type veth peer name eth0 netns %s: %v", server.ns, err)
	}
	for _, e := range []struct {
		h *netns.NetlinkHandle
		p nsPod
	}{{hc, client}, {hs, server}} {
		for _, dev := range []string{"lo", "eth0"} {
			l, err := e.h.LinkByName(dev)
			if err != nil {
				t.Fatal(err)
			}
			if dev == "eth0" {
				a := &netlink.Addr{IPNet: &net.IPNet{IP: e.p.ip, Mask: net.CIDRMask(24, 32)}}
				if err := e.h.AddrAdd(l, a); err != nil {
					t.Fatalf("ip addr add %s dev eth0 in %s: %v", a, e.p.ns, err)
				}
			}
			if err := e.h.LinkSetUp(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	kerneltest.WaitCarrier(t, hc, "eth0")
	kerneltest.WaitCarrier(t, hs, "eth0")
	return client, server
}

// checkNoProcesses fails when a process still runs in a pod's namespace
// (a qperf server, or the child it forks per test), and kills it. It
// looks again for up to 5 s first: the forked child, signalled with its
// group, may still be exiting once the server has been waited for, and
// on a loaded machine that can take a while; a child left running is
// still there after 5 s.
func checkNoProcesses(t *testing.T, pods ...nsPod) {
	t.Helper()
	for _, p := range pods {
		var want syscall.Stat_t
		if err := syscall.Stat(netns.Path(p.ns), &want); err != nil {
			t.Fatal(err)
		}
		left := inNetns(want)
		for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = inNetns(want) {
			time.Sleep(50 * time.Millisecond)
		}
		for _, pid := range left {
			t.Errorf("process %d still runs in %s", pid, p.ns)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// inNetns lists the processes whose network namespace is the file want.
func inNetns(want syscall.Stat_t) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		var st syscall.Stat_t
		pid, _ := strconv.Atoi(filepath.Base(d))
		// The test binary itself may show the namespace while one of
		// its threads starts a process there.
		if pid != os.Getpid() && syscall.Stat(d+"/ns/net", &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestOneByteOverVeth runs 1-byte tcp_lat and udp_lat over a veth pair.
// Tolerance: transactions/s x mean RTT is qperf's local time over the
// mean of both ends' times, 1 within 2% (as on captured output); the
// driver's RTT is exactly twice qperf's latency.
func TestOneByteOverVeth(t *testing.T) {
	client, server := podPair(t)
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			tr := workload.Trial{Pairs: []workload.Pair{{Server: server, Client: client}}, Duration: 2 * time.Second,
				BasePort: 12865, Spec: study.Workload{Tool: "qperf", Protocol: proto, MessageSize: 1}}
			started := false
			tr.Started = func(time.Time) { started = true }
			res, err := New().Run(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Metrics
			t.Logf("%v", m)
			if !started {
				t.Error("Started not called")
			}
			if !(m[MetricTPS] > 0 && m[MetricMean] > 0) || m[MetricMean] != 2*m[MetricHalfRTT] || m[MetricMsgBytes] != 1 {
				t.Errorf("metrics %v", m)
			}
			if x := m[MetricTPS] * m[MetricMean] / 1e6; math.Abs(x-1) > 0.02 {
				t.Errorf("transactions/s %v x RTT %v us = %v, want 1 +- 2%%", m[MetricTPS], m[MetricMean], x)
			}
			checkNoProcesses(t, client, server)
		})
	}
}

// A client with no server fails the trial with qperf's own message
// (after its -ws wait), and leaves no process behind.
func TestNoServerFails(t *testing.T) {
	client, server := podPair(t)
	// The "server" pod is the client's own peer address with nothing
	// listening: a pod whose Start runs no qperf server.
	silent := silentPod{server}
	tr := workload.Trial{Pairs: []workload.Pair{{Server: silent, Client: client}}, Duration: time.Second,
		BasePort: 12865, Spec: study.Workload{Tool: "qperf", Protocol: "tcp"}}
	_, err := New().Run(context.Background(), tr)
	if err == nil {
		t.Fatal("want an error")
	}
	t.Log(err)
	checkNoProcesses(t, client, server)
}

// silentPod starts `sleep` instead of whatever it is asked to run.
type silentPod struct{ nsPod }

func (p silentPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	return proc.Start(ctx, p.ns, nil, []string{"sleep", "60"})
}

// TestCompareSockperf runs qperf (1 B and 14 B) and sockperf (14 B) TCP
// ping-pong over the same veth pair, in rotating order, and logs the round trips
// and transactions/s: the comparison in docs/workloads.md. It asserts only
// that both tools measured something; their ratio on a shared machine is
// for the doc, not a pass condition. CNIBENCH_RR_ROUNDS sets the rounds
// (default 1), CNIBENCH_RR_SECONDS the trial length (default 2) and
// CNIBENCH_RR_PIN="S,C" pins server and client (taskset CPU lists).
func TestCompareSockperf(t *testing.T) {
	if err := sockperf.New().Check(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	client, server := podPair(t)
	rounds, secs := envInt("CNIBENCH_RR_ROUNDS", 1), envInt("CNIBENCH_RR_SECONDS", 2)
	var pin *study.Pin
	if sc := strings.Split(os.Getenv("CNIBENCH_RR_PIN"), ","); len(sc) == 2 {
		pin = &study.Pin{Server: sc[0], Client: sc[1]}
	}
	pairs := []workload.Pair{{Server: server, Client: client}}
	type tool struct {
		name string
		d    workload.Driver
		msg  int
	}
	tools := []tool{{"qperf-1B", New(), 1}, {"qperf-14B", New(), 14}, {"sockperf-14B", sockperf.New(), 14}}
	rtts, rates := map[string][]float64{}, map[string][]float64{}
	for r := range rounds {
		for k := range tools {
			tl := tools[(k+r)%len(tools)] // rotate so no tool always goes first
			tr := workload.Trial{Pairs: pairs, Duration: time.Duration(secs) * time.Second, Warmup: time.Second, BasePort: 12865 + 10*r,
				Spec: study.Workload{Tool: tl.d.Describe().Name, Protocol: "tcp", MessageSize: tl.msg, Pin: pin}}
			res, err := tl.d.Run(context.Background(), tr)
			if err != nil {
				t.Fatalf("%s: %v", tl.name, err)
			}
			rtt, tps := res.Metrics[MetricMean], res.Metrics[MetricTPS]
			if !(rtt > 0 && tps > 0) {
				t.Errorf("%s: metrics %v", tl.name, res.Metrics)
			}
			t.Logf("round %d %-12s rtt_mean_us %.2f, transactions_per_s %.0f", r, tl.name, rtt, tps)
			rtts[tl.name], rates[tl.name] = append(rtts[tl.name], rtt), append(rates[tl.name], tps)
		}
	}
	for _, tl := range tools {
		t.Logf("%-12s median of %d: rtt_mean_us %.2f, transactions_per_s %.0f", tl.name, rounds, median(rtts[tl.name]), median(rates[tl.name]))
	}
	checkNoProcesses(t, client, server)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Cancelling a trial mid-run stops clients and servers, including the
// child a qperf server forks for each test, which outlives its parent.
func TestCancelLeavesNoProcess(t *testing.T) {
	client, server := podPair(t)
	for _, proto := range []string{"tcp", "udp"} {
		t.Run(proto, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			tr := workload.Trial{Pairs: []workload.Pair{{Server: server, Client: client}}, Duration: 20 * time.Second,
				BasePort: 12865, Spec: study.Workload{Tool: "qperf", Protocol: proto}}
			tr.Started = func(time.Time) { time.AfterFunc(time.Second, cancel) }
			begin := time.Now()
			_, err := New().Run(ctx, tr)
			if err == nil {
				t.Fatal("want an error")
			}
			t.Logf("after %v: %v", time.Since(begin).Round(time.Millisecond), err)
			checkNoProcesses(t, client, server)
		})
	}
}
