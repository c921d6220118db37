package socklb_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cgroup2"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/socklb"
)

// pair makes two journaled throw-away namespaces joined by a veth:
// client 10.199.0.1/24, server 10.199.0.2/24. Neither has a route to the
// Service range, so a connect to a ClusterIP only works when translated.
func pair(t *testing.T) (client, server string) {
	t.Helper()
	kerneltest.RequireKernel(t, probe.SocketLB)
	run := kerneltest.RunID()
	j := kerneltest.Journal(t, run)
	client, server = kerneltest.Netns(t, j, run, "c"), kerneltest.Netns(t, j, run, "s")
	wire(t, client, server)
	return client, server
}

func wire(t *testing.T, client, server string) {
	t.Helper()
	h, err := netns.Handle(client)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := netns.Handle(server)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}, PeerName: "eth0", PeerNamespace: netlink.NsFd(s.NsFd())}
	if err := h.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		h    *netns.NetlinkHandle
		addr string
	}{{h, "10.199.0.1/24"}, {s, "10.199.0.2/24"}} {
		for _, name := range []string{"lo", "eth0"} {
			l, err := side.h.LinkByName(name)
			if err != nil {
				t.Fatal(err)
			}
			if name == "eth0" {
				a, _ := netlink.ParseAddr(side.addr)
				if err := side.h.AddrAdd(l, a); err != nil {
					t.Fatal(err)
				}
			}
			if err := side.h.LinkSetUp(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	kerneltest.WaitCarrier(t, h, "eth0")
	kerneltest.WaitCarrier(t, s, "eth0")
}

var (
	clusterIP = net.ParseIP("10.96.100.7").To4()
	serverIP  = net.ParseIP("10.199.0.2").To4()
)

func services() []netfilter.Service {
	return []netfilter.Service{
		{Namespace: "t", Name: "s", Protocol: "tcp", ClusterIP: clusterIP, Port: 80, Endpoints: []netfilter.Endpoint{{IP: serverIP, Port: 8080}}},
		{Namespace: "t", Name: "s", Protocol: "udp", ClusterIP: clusterIP, Port: 80, Endpoints: []netfilter.Endpoint{{IP: serverIP, Port: 8080}}},
	}
}

func attach(t *testing.T) *socklb.LB {
	t.Helper()
	dir, err := cgroup2.Own()
	if err != nil {
		t.Fatal(err)
	}
	lb, err := socklb.Attach(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	return lb
}

// In the served namespace a TCP connect and an unconnected UDP send to
// the ClusterIP reach the backend, and the peer is shown as the Service;
// a namespace not served is untouched; Close detaches everything.
func TestSocketLBTranslates(t *testing.T) {
	client, server := pair(t)
	tcp, udp := listen(t, server)
	lb := attach(t)
	if err := lb.Serve(client); err != nil {
		t.Fatal(err)
	}
	if err := lb.Set(services()); err != nil {
		t.Fatal(err)
	}
	svc := &net.TCPAddr{IP: clusterIP, Port: 80}

	var peer net.Addr
	if err := netns.Do(client, func() error {
		c, err := net.DialTimeout("tcp", svc.String(), 3*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		peer = c.RemoteAddr()
		_, err = c.Write([]byte("x"))
		return err
	}); err != nil {
		t.Fatalf("TCP to the ClusterIP from the served namespace: %v", err)
	}
	if peer.String() != svc.String() {
		t.Errorf("getpeername shows %v, want the Service %v", peer, svc)
	}
	if got := <-tcp; got != "x" {
		t.Errorf("the backend read %q, want x", got)
	}

	var from net.Addr
	if err := netns.Do(client, func() error {
		c, err := net.ListenPacket("udp4", "0.0.0.0:0")
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.WriteTo([]byte("ping"), &net.UDPAddr{IP: clusterIP, Port: 80}); err != nil {
			return err
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 16)
		_, from, err = c.ReadFrom(buf)
		return err
	}); err != nil {
		t.Fatalf("UDP to the ClusterIP from the served namespace: %v", err)
	}
	if from.String() != (&net.UDPAddr{IP: clusterIP, Port: 80}).String() {
		t.Errorf("the reply comes from %v, want the Service", from)
	}
	<-udp

	st, err := lb.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Translated < 2 || st.Reversed < 2 || st.NoBackend != 0 || st.RevNATFailed != 0 {
		t.Errorf("counters %+v: want >= 2 translated and reversed, no failures", st)
	}

	// The server's namespace is not served: the ClusterIP stays unrouted.
	if err := dialFrom(server, svc); err == nil {
		t.Error("a namespace not served reached the ClusterIP: translated")
	}
	before := attached(t)
	if err := lb.Close(); err != nil {
		t.Fatal(err)
	}
	if after := attached(t); after != before-1 {
		t.Errorf("connect4 programs on the cgroup: %d before Close, %d after; want one less", before, after)
	}
	if err := dialFrom(client, svc); err == nil {
		t.Error("after Close the ClusterIP is still translated")
	}
}

// Set replaces: a Service left out of the next Set is no longer
// translated, and an empty Set leaves the maps empty.
func TestSocketLBSetReplaces(t *testing.T) {
	client, server := pair(t)
	tcp, _ := listen(t, server)
	lb := attach(t)
	if err := lb.Serve(client); err != nil {
		t.Fatal(err)
	}
	svc := &net.TCPAddr{IP: clusterIP, Port: 80}
	if err := lb.Set(services()); err != nil {
		t.Fatal(err)
	}
	if err := dialFrom(client, svc); err != nil {
		t.Fatalf("with the Service: %v", err)
	}
	<-tcp
	if err := lb.Set(nil); err != nil {
		t.Fatal(err)
	}
	if err := dialFrom(client, svc); err == nil {
		t.Error("the Service was removed and is still translated")
	}
}

// A test binary that attached the programs and was killed leaves no
// program on the cgroup: the bpf_links die with their process.
func TestSocketLBGoneWithProcess(t *testing.T) {
	if os.Getenv("CNIBENCH_SOCKLB_CHILD") == "1" {
		dir, _ := cgroup2.Own()
		if _, err := socklb.Attach(dir); err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("attached\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	kerneltest.RequireKernel(t, probe.SocketLB)
	before := attached(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSocketLBGoneWithProcess$")
	cmd.Env = append(os.Environ(), "CNIBENCH_SOCKLB_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	select {
	case l := <-line:
		if l != "attached" {
			t.Fatalf("child did not attach: %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("child did not attach within 10 s")
	}
	if got := attached(t); got != before+1 {
		t.Fatalf("with the child attached: %d connect4 programs, want %d", got, before+1)
	}
	cmd.Process.Signal(os.Kill)
	cmd.Wait()
	// The emulated VM can take seconds to release the dead process's
	// links; the loop ends as soon as they are gone.
	deadline := time.Now().Add(30 * time.Second)
	for attached(t) != before {
		if time.Now().After(deadline) {
			t.Fatalf("after kill -9: %d connect4 programs on the cgroup, want %d", attached(t), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attached counts the socket-LB programs on cnibench's cgroup.
func attached(t *testing.T) int {
	t.Helper()
	dir, err := cgroup2.Own()
	if err != nil {
		t.Fatal(err)
	}
	n, err := socklb.Attached(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func dialFrom(ns string, to *net.TCPAddr) error {
	return netns.Do(ns, func() error {
		c, err := net.DialTimeout("tcp", to.String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// listen serves the backend in namespace ns: TCP and UDP on port 8080.
// The TCP channel gets what each connection sent first; UDP echoes.
func listen(t *testing.T, ns string) (tcp, udp chan string) {
	t.Helper()
	tcp, udp = make(chan string, 8), make(chan string, 8)
	var l net.Listener
	var pc net.PacketConn
	if err := netns.Do(ns, func() error {
		var err error
		if l, err = net.Listen("tcp4", "10.199.0.2:8080"); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp4", "10.199.0.2:8080")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); pc.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			buf := make([]byte, 16)
			n, _ := c.Read(buf)
			c.Close()
			tcp <- string(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 16)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					udp <- "error " + err.Error()
				}
				return
			}
			pc.WriteTo(buf[:n], from)
			udp <- string(buf[:n])
		}
	}()
	return tcp, udp
}
