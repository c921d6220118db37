// Package dptest holds the kernel-test helpers the datapath packages
// share: a two-node local cluster with cleanup, TCP and UDP echo between
// pods, and a dump of a namespace's wiring for failing tests.
package dptest

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine/local"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// Up builds a two-node cluster with d and removes it in Cleanup, closing
// d first when it is a datapath.Closer (as the engine does), and fails
// the test if a namespace is left behind.
func Up(t *testing.T, d datapath.Datapath, underlayMTU int) *local.Cluster {
	t.Helper()
	closeDP := func() {
		if c, ok := d.(datapath.Closer); ok {
			if err := c.Close(); err != nil {
				t.Errorf("close datapath %s: %v", d.Name(), err)
			}
		}
	}
	id := kerneltest.RunID()
	c, err := local.Up(context.Background(), local.Config{RunID: id, Datapath: d, UnderlayMTU: underlayMTU,
		Recorder: kerneltest.Journal(t, id), Kill: cleanup.KillInNetns})
	if err != nil {
		closeDP()
		t.Fatalf("up %s: %v", d.Name(), err)
	}
	t.Cleanup(func() {
		closeDP()
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

// UpPods is Up with n pods on each node (servers on the first node,
// clients on the second); when the test fails, every node's wiring is
// logged before the cluster is torn down.
func UpPods(t *testing.T, d datapath.Datapath, underlayMTU, n int) (c *local.Cluster, servers, clients []*local.Pod) {
	t.Helper()
	c = Up(t, d, underlayMTU)
	servers, clients, err := c.ScalePods(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.Nodes() {
				kerneltest.Dump(t, n.Netns())
			}
		}
	})
	return c, servers, clients
}

// TCPEcho listens on srv's address in its namespace and checks that a
// client in cli gets back payload bytes.
func TCPEcho(t testing.TB, srv, cli *local.Pod, payload int) {
	t.Helper()
	TCPEchoVia(t, srv, cli, srv.IP(), payload)
}

// TCPEchoVia is TCPEcho with the client dialing addr (a Service in
// front of srv, port 7000) instead of srv's own address.
func TCPEchoVia(t testing.TB, srv, cli *local.Pod, addr net.IP, payload int) {
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
		conn, err = net.DialTimeout("tcp", net.JoinHostPort(addr.String(), "7000"), 3*time.Second)
		return err
	})
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, cli.Name(), err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	msg := make([]byte, payload)
	for i := range msg {
		msg[i] = byte(i)
	}
	go func() { _, _ = conn.Write(msg) }()
	got := make([]byte, payload)
	if _, err := io.ReadFull(conn, got); err != nil {
		t.Fatalf("tcp echo of %d bytes %s -> %s: %v", payload, cli.Name(), srv.Name(), err)
	}
	for i := range got {
		if got[i] != msg[i] {
			t.Fatalf("tcp echo: byte %d differs", i)
		}
	}
}

// UDPEcho sends datagrams of size bytes from cli to srv and expects them
// echoed; UDP may lose a datagram, so it retries a few times.
func UDPEcho(t testing.TB, srv, cli *local.Pod, size int) {
	t.Helper()
	UDPEchoVia(t, srv, cli, srv.IP(), size)
}

// UDPEchoVia is UDPEcho with the client's connected socket aimed at addr
// (a Service in front of srv, port 7001): the echo only arrives when it
// comes back from addr, as a connected UDP socket filters.
func UDPEchoVia(t testing.TB, srv, cli *local.Pod, addr net.IP, size int) {
	t.Helper()
	var pc net.PacketConn
	err := netns.Do(srv.Netns(), func() error {
		var err error
		pc, err = net.ListenPacket("udp", net.JoinHostPort(srv.IP().String(), "7001"))
		return err
	})
	if err != nil {
		t.Fatalf("listen udp in %s: %v", srv.Name(), err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	var conn net.Conn
	err = netns.Do(cli.Netns(), func() error {
		var err error
		conn, err = net.Dial("udp", net.JoinHostPort(addr.String(), "7001"))
		return err
	})
	if err != nil {
		t.Fatalf("udp dial %s from %s: %v", addr, cli.Name(), err)
	}
	defer conn.Close()
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	got := make([]byte, size+1)
	for try := 0; try < 5; try++ {
		if _, err := conn.Write(msg); err != nil {
			t.Fatalf("udp write: %v", err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		n, err := conn.Read(got)
		if err != nil {
			continue
		}
		if n != size || string(got[:n]) != string(msg) {
			t.Fatalf("udp echo: got %d bytes, want %d identical", n, size)
		}
		return
	}
	t.Fatalf("udp echo of %d bytes %s -> %s: no answer after 5 tries", size, cli.Name(), srv.Name())
}
