package calicorouted

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/birdmesh"
	"github.com/cnibench/cnibench/internal/datapath/internal/calicopod"
	"github.com/cnibench/cnibench/internal/datapath/internal/dptest"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// requireBIRD skips without root or without BIRD 2 and birdc (bird2
// ships both); with them, a broken BIRD fails the test.
func requireBIRD(t *testing.T, d *BIRD) string {
	t.Helper()
	kerneltest.RequireRoot(t)
	kerneltest.RequireFeatures(t, d)
	for _, c := range []string{"birdc", "/usr/sbin/birdc"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Skip("skipped: birdc not found (apt-get install bird2)")
	return ""
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// birdProcsUsing lists live processes whose command line names dir: the
// BIRDs of a run, whatever became of the PIDs cnibench knew.
func birdProcsUsing(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, dir) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie holds no socket, route or namespace
			}
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

// birdRoutes lists the routes BIRD programmed on a node (proto bird), in
// iproute2's words, sorted.
func birdRoutes(t *testing.T, n *local.Node) []string {
	t.Helper()
	out, err := exec.Command("ip", "-n", n.Netns(), "-4", "route", "show", "proto", "bird").CombinedOutput()
	if err != nil {
		t.Fatalf("ip route show proto bird on %s: %v\n%s", n.Name(), err, out)
	}
	var rs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			rs = append(rs, l)
		}
	}
	slices.Sort(rs)
	return rs
}

// birdProtocols returns the BGP sessions birdc reports, name -> "State Info".
//
//	Name       Proto      Table      State  Since         Info
//	Mesh_198_18_0_2 BGP        ---        up     13:52:20.041  Established
func birdProtocols(t *testing.T, birdc, socket string) map[string]string {
	t.Helper()
	out, err := exec.Command(birdc, "-s", socket, "show", "protocols").CombinedOutput()
	if err != nil {
		t.Fatalf("birdc -s %s show protocols: %v\n%s", socket, err, out)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 5 && f[1] == "BGP" {
			m[f[0]] = f[3] + " " + strings.Join(f[5:], " ")
		}
	}
	return m
}

// TestCalicoRoutedBIRD runs calico-routed with a BIRD per node: the
// routes between nodes are BIRD's (proto bird, learned over
// Established iBGP sessions, the block and nothing beneath it), pods
// reach each other across nodes both ways over them, and after Close no
// BIRD and no directory is left.
func TestCalicoRoutedBIRD(t *testing.T) {
	d := NewBIRD()
	birdc := requireBIRD(t, d)
	var pids []int
	var dir string
	t.Run("mesh", func(t *testing.T) {
		c := dptest.Up(t, d, 1500)
		dir = d.Dir()
		nodes := c.Nodes()
		defer func() {
			if t.Failed() {
				for _, n := range nodes {
					kerneltest.Dump(t, n.Netns())
				}
				for _, b := range d.Running() {
					t.Logf("BIRD on %s:\n%s", b.Node(), b.Tail(30))
				}
			}
		}()
		ds := d.Daemons()
		if len(ds) != len(nodes) {
			t.Errorf("daemons %+v, want one bird per node", ds)
		}
		for _, dm := range ds {
			pids = append(pids, dm.PID)
			if dm.Name != "bird" || !alive(dm.PID) {
				t.Errorf("daemon %+v is not a running bird", dm)
			}
		}
		servers, clients, err := c.ScalePods(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}

		// Exactly the blackhole of the own block and the other node's
		// block via its underlay address: Felix's per-pod /32s (present
		// now on both nodes) are not exported.
		for i, n := range nodes {
			o := nodes[1-i]
			want := []string{
				fmt.Sprintf("%s via %s dev eth1", calicopod.Block(dpNode(1-i, o)), o.UnderlayIP()),
				fmt.Sprintf("blackhole %s", calicopod.Block(dpNode(i, n))),
			}
			slices.Sort(want)
			if got := birdRoutes(t, n); !slices.Equal(got, want) {
				t.Errorf("node %s: proto bird routes\n  %s\nwant\n  %s", n.Name(), strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		}

		for _, b := range d.Running() {
			ps := birdProtocols(t, birdc, b.Socket)
			if len(ps) != len(nodes)-1 {
				t.Errorf("BIRD on %s has BGP sessions %v, want %d", b.Node(), ps, len(nodes)-1)
			}
			for name, state := range ps {
				if state != "up Established" {
					t.Errorf("BIRD on %s: session %s is %q, want up Established", b.Node(), name, state)
				}
			}
		}

		dptest.TCPEcho(t, servers[0], clients[0], 1<<20)
		dptest.TCPEcho(t, clients[1], servers[1], 256<<10)
		dptest.UDPEcho(t, servers[0], clients[0], 1472)
		dptest.UDPEcho(t, clients[1], servers[0], 100)
		dptest.TCPEcho(t, servers[0], servers[1], 64<<10)

		// Close stops the daemons itself, while the namespaces still
		// exist (deleting them would kill BIRD too, and hide a Close that
		// does not). SIGTERM lets BIRD shut down: without persist it
		// withdraws its routes, which SIGKILL would not.
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("bird pid %d still running after Close", pid)
			}
		}
		for _, n := range nodes {
			if got := birdRoutes(t, n); len(got) > 0 {
				t.Errorf("node %s keeps BIRD's routes after BIRD stopped: %v", n.Name(), got)
			}
		}
	})
	// dptest.Up's cleanup has closed the datapath again and the cluster.
	if len(pids) == 0 || dir == "" {
		t.Fatal("the mesh never ran")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("bird pid %d still running after the run", pid)
		}
	}
	if left := birdProcsUsing(t, dir); len(left) > 0 {
		t.Errorf("processes of the run's BIRD directory left: %v", left)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("BIRD directory %s left behind", dir)
	}
}

// dpNode is the i-th node of a local cluster as its datapath saw it.
func dpNode(i int, n *local.Node) datapath.Node {
	return datapath.Node{Name: n.Name(), Netns: n.Netns(), Index: i, Underlay: local.UnderlayDev, UnderlayIP: n.UnderlayIP()}
}

// TestCalicoRoutedBIRDKilledRun: when cnibench dies, cleanup kills what
// runs in the run's namespaces; BIRD is among it.
func TestCalicoRoutedBIRDKilledRun(t *testing.T) {
	d := NewBIRD()
	requireBIRD(t, d)
	c := dptest.Up(t, d, 1500)
	ds := d.Daemons()
	if len(ds) == 0 {
		t.Fatal("no BIRD running")
	}
	for _, n := range c.Nodes() {
		if err := cleanup.KillInNetns(n.Netns()); err != nil {
			t.Fatalf("kill in %s: %v", n.Netns(), err)
		}
	}
	for _, dm := range ds {
		// KillInNetns waits until its processes are gone or zombies; the
		// daemon's own waiter reaps them.
		b := d.Running()[slices.IndexFunc(d.Running(), func(b *birdmesh.Daemon) bool { return b.PID() == dm.PID })]
		select {
		case <-b.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("bird on %s (pid %d) not reaped 5 s after cleanup.KillInNetns", dm.Node, dm.PID)
		}
		if alive(dm.PID) {
			t.Errorf("bird on %s (pid %d) survived cleanup.KillInNetns", dm.Node, dm.PID)
		}
	}
	// Close after the daemons died under it still cleans up (dptest.Up's
	// cleanup checks the error and the namespaces).
}

// TestBIRDConnectNodesFailsClearly: a BIRD that cannot build its sessions
// (here: the peers' addresses are wrong) makes ConnectNodes fail within
// its timeout, naming the missing route and quoting BIRD's log, and
// leaves nothing behind.
func TestBIRDConnectNodesFailsClearly(t *testing.T) {
	d := NewBIRD()
	requireBIRD(t, d)
	d.Timeout = 4 * time.Second
	runID := kerneltest.RunID()
	c, err := local.Up(context.Background(), local.Config{RunID: runID, Datapath: wrongPeers{d}, Recorder: kerneltest.Journal(t, runID), Kill: cleanup.KillInNetns})
	if err == nil {
		c.Close()
		t.Fatal("ConnectNodes succeeded with unreachable peers")
	}
	t.Logf("error: %v", err)
	for _, want := range []string{"node server has no route 192.168.1.0/24 via 198.18.0.102 dev eth1 proto bird after 4s", "BIRD log on server ends:", "Mesh_198_18_0_102"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if len(d.Daemons()) != 0 || d.Dir() != "" {
		t.Errorf("after the failed Up: daemons %v, dir %q", d.Daemons(), d.Dir())
	}
	names, _ := netns.List(local.Prefix + runID)
	if len(names) > 0 {
		t.Errorf("namespaces left: %v", names)
	}
}

// wrongPeers hands BIRD a wrong underlay address for the second node, so
// the server's BIRD peers with an address nobody has.
type wrongPeers struct{ *BIRD }

func (w wrongPeers) ConnectNodes(nodes []datapath.Node) error {
	nodes = slices.Clone(nodes)
	nodes[1].UnderlayIP = net.IPv4(198, 18, 0, 102)
	return w.BIRD.ConnectNodes(nodes)
}
