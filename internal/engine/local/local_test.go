package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
)

func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: kernel test needs root (creates network namespaces)")
	}
}

// requireFeatures skips when the kernel lacks a feature; a datapath that
// is supported but broken must fail, not skip.
func requireFeatures(t testing.TB, d datapath.Datapath) {
	t.Helper()
	if err := probe.Require(d.Features()...); err != nil {
		// The full-kernel VM (scripts/vm) has every kernel feature: a
		// missing one there is a broken probe or VM, not a reason to skip.
		var ue *probe.UnsupportedError
		if os.Getenv("CNIBENCH_IN_VM") != "" && errors.As(err, &ue) && ue.Kind == probe.KindKernel {
			t.Fatalf("in the full-kernel VM: %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

func testRunID(t testing.TB) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

func upCluster(t *testing.T, d datapath.Datapath) *Cluster {
	t.Helper()
	c, err := Up(context.Background(), Config{RunID: testRunID(t), Datapath: d, Kill: cleanup.KillInNetns})
	if err != nil {
		t.Fatalf("up %s: %v", d.Name(), err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		for _, ns := range c.Namespaces() {
			if netns.Exists(ns) {
				t.Errorf("namespace %s left behind", ns)
			}
		}
	})
	return c
}

// dump prints the wiring of a namespace to help when a test fails.
func dump(t *testing.T, ns string) {
	for _, args := range [][]string{{"addr"}, {"route"}, {"neigh"}, {"-d", "link", "show", "type", "vxlan"}} {
		out, _ := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
		t.Logf("ip -n %s %s:\n%s", ns, strings.Join(args, " "), out)
	}
	out, _ := exec.Command("bridge", "-n", ns, "fdb", "show").CombinedOutput()
	t.Logf("bridge -n %s fdb:\n%s", ns, out)
}

// tcpEcho listens in the server pod and checks that a client in the
// client pod gets back what it sent, through the datapath.
func tcpEcho(t *testing.T, srv, cli *Pod, payload int) {
	t.Helper()
	var ln net.Listener
	err := netns.Do(srv.Netns(), func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(srv.IP().String(), "7000"))
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", srv.Name(), err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.Copy(conn, conn)
	}()
	var conn net.Conn
	err = netns.Do(cli.Netns(), func() error {
		var err error
		conn, err = net.DialTimeout("tcp", net.JoinHostPort(srv.IP().String(), "7000"), 3*time.Second)
		return err
	})
	if err != nil {
		dump(t, srv.node.ns)
		dump(t, cli.node.ns)
		t.Fatalf("dial %s from %s: %v", srv.IP(), cli.Name(), err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	msg := make([]byte, payload)
	for i := range msg {
		msg[i] = byte(i)
	}
	go func() { _, _ = conn.Write(msg) }()
	got := make([]byte, payload)
	if _, err := io.ReadFull(conn, got); err != nil {
		t.Fatalf("echo %d bytes: %v", payload, err)
	}
	for i := range got {
		if got[i] != msg[i] {
			t.Fatalf("byte %d differs", i)
		}
	}
}

func TestDatapathsCarryTCPAcrossNodes(t *testing.T) {
	requireRoot(t)
	for _, d := range catalog.All() {
		t.Run(d.Name(), func(t *testing.T) {
			requireFeatures(t, d)
			c := upCluster(t, d)
			servers, clients, err := c.ScalePods(context.Background(), 2)
			if err != nil {
				t.Fatal(err)
			}
			// Across nodes, both directions, with a payload larger than
			// the MTU so segmentation and the tunnel MTU are exercised.
			tcpEcho(t, servers[0], clients[0], 1<<20)
			tcpEcho(t, clients[1], servers[1], 1<<20)
			// Same node.
			tcpEcho(t, servers[0], servers[1], 64<<10)
			for _, p := range append(servers, clients...) {
				if p.SetupLatency() <= 0 {
					t.Errorf("pod %s: no setup latency recorded", p.Name())
				}
			}
		})
	}
}

func TestScalePodsDownRemovesNamespaces(t *testing.T) {
	requireRoot(t)
	d, _ := catalog.Lookup("flannel-vxlan")
	requireFeatures(t, d)
	c := upCluster(t, d)
	servers, _, err := c.ScalePods(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	gone := servers[2].Netns()
	if _, _, err := c.ScalePods(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if netns.Exists(gone) {
		t.Errorf("namespace %s still exists after scaling down", gone)
	}
	if n := len(c.server.Pods()); n != 1 {
		t.Errorf("%d server pods, want 1", n)
	}
}

func TestPodMTU(t *testing.T) {
	requireRoot(t)
	for _, d := range catalog.All() {
		t.Run(d.Name(), func(t *testing.T) {
			requireFeatures(t, d)
			c := upCluster(t, d)
			servers, _, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := podMTU(t, c, servers[0]), d.MTU(1500); got != want {
				t.Errorf("pod MTU %d, want %d", got, want)
			}
			// Each CNI's own default (connectivity_test.go).
			if want, ok := wantMTU[d.Name()]; ok && d.MTU(1500) != want {
				t.Errorf("%s MTU on a 1500-byte underlay = %d, want %d", d.Name(), d.MTU(1500), want)
			}
		})
	}
}

var _ = fmt.Sprintf
