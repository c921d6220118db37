package iperf3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/proc"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/workload"
)

// nsPod is the smallest engine.Pod: a named network namespace.
type nsPod struct {
	ns string
	ip net.IP
}

func (p nsPod) Name() string { return p.ns }
func (p nsPod) Node() string { return "local" }
func (p nsPod) IP() net.IP   { return p.ip }

// Netns makes the pod a namespace of this machine, as the local
// engine's pods are (the pktgen sender needs it).
func (p nsPod) Netns() string { return p.ns }
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
	client = nsPod{ns: base + "-c", ip: net.IPv4(10, 251, 0, 1)}
	server = nsPod{ns: base + "-s", ip: net.IPv4(10, 251, 0, 2)}
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

// pidsIn lists the processes whose network namespace is the named one.
func pidsIn(t *testing.T, name string) []int {
	t.Helper()
	var want syscall.Stat_t
	if err := syscall.Stat(netns.Path(name), &want); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		var st syscall.Stat_t
		if syscall.Stat(d+"/ns/net", &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	return pids
}

func checkNoProcesses(t *testing.T, pods ...nsPod) {
	t.Helper()
	for _, p := range pods {
		if pids := pidsIn(t, p.ns); len(pids) > 0 {
			t.Errorf("processes %v still run in %s", pids, p.ns)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

func TestRunInNamespaces(t *testing.T) {
	client, server := podPair(t)
	tr := trial(workload.Pair{Server: server, Client: client}, workload.Pair{Server: server, Client: client})
	var started time.Time
	tr.Started = func(at time.Time) { started = at }
	d := New()
	raw := map[int][2][]byte{}
	d.Output = func(i int, s, c []byte) { raw[i] = [2][]byte{s, c} }
	res, err := d.Run(context.Background(), tr)
	checkNoProcesses(t, client, server)
	defer func() {
		if t.Failed() {
			for i, r := range raw {
				t.Logf("pair %d server JSON:\n%s\nclient JSON:\n%s", i, r[0], r[1])
			}
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	if started.IsZero() {
		t.Error("Started not called")
	}
	t.Logf("metrics %v", res.Metrics)
	// Two pairs ran: without their two results the sums below compare
	// nothing (0 with 0). Each pair's bitrate > 0 makes the sum > 0.
	if len(res.PerReplica) != 2 {
		t.Fatalf("%d per-pair results, want 2: %v", len(res.PerReplica), res.PerReplica)
	}
	sum := 0.0
	for i, m := range res.PerReplica {
		t.Logf("pair %d: %v", i, m)
		br, sent := m[results.MetricBitrate], m[MetricSenderBitrate]
		if !(br > 0) {
			t.Errorf("pair %d: bitrate %v", i, br)
		}
		// The server's measured window starts when its side of the warm-up
		// ends, which under CPU contention can be a fraction of a second
		// off the client's, so the two rates differ by tens of percent on
		// a busy machine. Twice the sent rate is impossible, though: it
		// would mean a window or unit mix-up in the parser.
		if br > sent*2 {
			t.Errorf("pair %d: server measured %v bit/s, client sent only %v", i, br, sent)
		}
		sum += br
	}
	if got := res.Metrics[results.MetricBitrateSum]; !near(got, sum) {
		t.Errorf("bitrate_sum %v, per-replica sum %v", got, sum)
	}
	if got := res.Metrics[results.MetricBitrate]; !near(got, sum/2) {
		t.Errorf("bitrate %v, want mean %v", got, sum/2)
	}
}

func TestRunInNamespacesCancelled(t *testing.T) {
	client, server := podPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := trial(workload.Pair{Server: server, Client: client})
	tr.Duration = 10 * time.Second
	tr.Started = func(time.Time) {
		// Positive control for checkNoProcesses: the server is seen.
		// (Not the client: it may be between two connect attempts.)
		if len(pidsIn(t, server.ns)) == 0 {
			t.Error("no process found in the server pod while iperf3 runs")
		}
		time.AfterFunc(1500*time.Millisecond, cancel)
	}
	_, err := New().Run(ctx, tr)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	checkNoProcesses(t, client, server)
}

// A client with no server: refused, retried, then a clear error.
func TestRunInNamespacesRefused(t *testing.T) {
	client, server := podPair(t)
	noServer := nsPod{ns: server.ns, ip: net.IPv4(10, 251, 0, 2)}
	d := New()
	// The "server" runs a program that exits at once, so nothing listens.
	tr := trial(workload.Pair{Server: exitingPod{noServer}, Client: client})
	_, err := d.Run(context.Background(), tr)
	if !errors.Is(err, ErrConnect) {
		t.Errorf("error %v, want ErrConnect", err)
	}
	t.Log(err)
	checkNoProcesses(t, client, server)
}

// exitingPod runs "true" instead of whatever it is asked to run.
type exitingPod struct{ nsPod }

func (p exitingPod) Start(ctx context.Context, argv []string) (engine.Process, error) {
	if _, err := exec.LookPath("true"); err != nil {
		return nil, err
	}
	return proc.Start(ctx, p.ns, nil, []string{"true"})
}
