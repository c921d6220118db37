package flanneld

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/netns"
)

func TestParseSubnetEnv(t *testing.T) {
	l, err := parseSubnetEnv("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.57.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=false\n")
	if err != nil {
		t.Fatal(err)
	}
	if l.subnet.String() != "10.244.57.0/24" || l.gw.String() != "10.244.57.1" || l.mtu != 1472 {
		t.Errorf("got subnet %s gw %s mtu %d", l.subnet, l.gw, l.mtu)
	}
	for _, bad := range []string{"", "FLANNEL_SUBNET=10.244.57.1/24\n", "FLANNEL_SUBNET=x\nFLANNEL_MTU=1472", "FLANNEL_SUBNET=10.0.0.1/24\nFLANNEL_MTU=9"} {
		if _, err := parseSubnetEnv(bad); err == nil {
			t.Errorf("parseSubnetEnv(%q) accepted", bad)
		}
	}
}

func FuzzParseSubnetEnv(f *testing.F) {
	f.Add("FLANNEL_SUBNET=10.244.57.1/24\nFLANNEL_MTU=1472\n")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseSubnetEnv(s)
		if err == nil && (l.subnet == nil || l.gw == nil || l.mtu < 68) {
			t.Fatalf("accepted incomplete lease %+v", l)
		}
	})
}

// requireFlannel skips with the reason when flanneld or etcd is missing.
func requireFlannel(t *testing.T, d *Datapath) {
	t.Helper()
	if _, _, err := d.binaries(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	kerneltest.RequireFeatures(t, d)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestFlannelUDPWithRealFlanneld carries TCP and UDP across nodes through
// flanneld's user-space UDP encapsulation, and checks the daemons exit
// with the run.
func TestFlannelUDPWithRealFlanneld(t *testing.T) {
	kerneltest.RequireRoot(t)
	d := New()
	d.PodMTU = 1450 // as seed 003
	requireFlannel(t, d)
	var pids []int
	var dir string
	t.Run("traffic", func(t *testing.T) {
		c := dptest.Up(t, d, 1500)
		dir = d.dir
		servers, clients, err := c.ScalePods(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if t.Failed() {
				for _, n := range c.Nodes() {
					kerneltest.Dump(t, n.Netns())
				}
				for _, dm := range d.flannelds {
					t.Logf("%s on %s:\n%s", dm.Name(), dm.Node(), dm.Tail(8))
				}
			}
		}()
		for _, dm := range d.Daemons() {
			pids = append(pids, dm.PID)
			if !alive(dm.PID) {
				t.Errorf("%s on %s (pid %d) is not running", dm.Name, dm.Node, dm.PID)
			}
		}
		if len(pids) != 3 {
			t.Errorf("daemons %+v, want etcd and two flanneld", d.Daemons())
		}
		h, err := netns.Handle(c.Nodes()[1].Netns())
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if l, err := h.LinkByName("flannel0"); err != nil || l.Type() != "tuntap" {
			t.Errorf("flannel0 on the client node: %v, %v", l, err)
		}
		dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
		dptest.TCPEcho(t, clients[1], servers[1], 256<<10)
		dptest.UDPEcho(t, servers[0], clients[0], 1400)
		dptest.UDPEcho(t, clients[1], servers[1], 100)
		dptest.TCPEcho(t, servers[0], servers[1], 64<<10)
		iperf3(t, servers[0], clients[0])
		if got := servers[0].IP(); !mustCIDR(Network).Contains(got) {
			t.Errorf("pod IP %s outside %s", got, Network)
		}
	})
	// dptest.Up's cleanup has run Close.
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("daemon pid %d still running after the run", pid)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("temporary directory %s left behind", dir)
	}
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// iperf3 runs a short iperf3 TCP and UDP test from cli to srv, when
// iperf3 is installed, as the acceptance asks.
func iperf3(t *testing.T, srv, cli *local.Pod) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Log("iperf3 not installed; skipping the iperf3 part")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := srv.Start(ctx, []string{"iperf3", "-s", "-B", srv.IP().String(), "-p", "5299"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, args := range [][]string{
		{"-t", "2"},
		{"-t", "2", "-u", "-b", "50M", "-l", "1400"},
	} {
		argv := append([]string{"iperf3", "-c", srv.IP().String(), "-p", "5299", "--json"}, args...)
		out := iperf3Client(ctx, t, cli, argv)
		var r struct {
			End struct {
				SumReceived struct {
					BitsPerSecond float64 `json:"bits_per_second"`
				} `json:"sum_received"`
				Sum struct {
					BitsPerSecond float64 `json:"bits_per_second"`
					LostPercent   float64 `json:"lost_percent"`
				} `json:"sum"`
			} `json:"end"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("iperf3 json: %v", err)
		}
		bps := r.End.SumReceived.BitsPerSecond
		if bps == 0 {
			bps = r.End.Sum.BitsPerSecond
		}
		t.Logf("iperf3 %v through flannel-udp: %.0f Mbit/s (UDP loss %.1f%%)", args, bps/1e6, r.End.Sum.LostPercent)
		if bps <= 0 {
			t.Errorf("iperf3 %v: no traffic received", args)
		}
	}
}

// iperf3Client runs an iperf3 client in cli and returns its output,
// starting it again while the server is not ready for it (for up to
// 10 s): nothing says when the server started in the pod listens, and
// on a loaded machine that can be later than any fixed wait; it may
// also still be closing the previous test. A server that never takes
// the test fails it.
func iperf3Client(ctx context.Context, t *testing.T, cli *local.Pod, argv []string) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		p, err := cli.Start(ctx, argv)
		if err != nil {
			t.Fatal(err)
		}
		out, stderr, err := p.Wait()
		all := append(append([]byte(nil), out...), stderr...)
		// With --json, iperf3 3.12 reports these in the JSON and exits 0.
		notReady := bytes.Contains(all, []byte("unable to connect to server")) || bytes.Contains(all, []byte("server is busy"))
		if notReady && time.Now().Before(deadline) {
			continue
		}
		if err != nil || notReady {
			t.Fatalf("%v: %v\n%s", argv, err, all)
		}
		return out
	}
}
