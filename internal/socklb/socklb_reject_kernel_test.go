package socklb_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/netfilter"
	"github.com/cnibench/cnibench/internal/netns"
)

// A connect or send to a Service without a backend is refused, as
// Cilium refuses it (bpf/bpf_sock.c cil_sock4_connect and
// cil_sock4_sendmsg: SYS_REJECT on -EHOSTUNREACH), never let through
// untranslated to the ClusterIP; without bpf_set_retval the caller sees
// EPERM.
func TestSocketLBRejectsWithoutBackend(t *testing.T) {
	client, _ := pair(t)
	lb := attach(t)
	if err := lb.Serve(client); err != nil {
		t.Fatal(err)
	}
	empty := services()
	for i := range empty {
		empty[i].Endpoints = nil
	}
	if err := lb.Set(empty); err != nil {
		t.Fatal(err)
	}
	svc := &net.TCPAddr{IP: clusterIP, Port: 80}
	if err := dialFrom(client, svc); !errors.Is(err, syscall.EPERM) {
		t.Errorf("TCP connect to a Service without backends: %v, want EPERM (refused by connect4)", err)
	}
	err := netns.Do(client, func() error {
		c, err := net.ListenPacket("udp4", "0.0.0.0:0")
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.WriteTo([]byte("ping"), &net.UDPAddr{IP: clusterIP, Port: 80})
		return err
	})
	if !errors.Is(err, syscall.EPERM) {
		t.Errorf("UDP send to a Service without backends: %v, want EPERM (refused by sendmsg4)", err)
	}
	st, err := lb.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.NoBackend != 2 || st.Translated != 0 {
		t.Errorf("counters %+v: want 2 refused without backend, none translated", st)
	}
}

// A reverse-NAT entry whose Service was made again (another reverse-NAT
// index) or has no backend left is stale: dropped, and the reply shown
// from the backend, as Cilium's __sock4_xlate_rev does.
func TestSocketLBDropsStaleReverseNAT(t *testing.T) {
	client, server := pair(t)
	_, udp := listen(t, server)
	lb := attach(t)
	if err := lb.Serve(client); err != nil {
		t.Fatal(err)
	}
	other := netfilter.Service{Namespace: "t", Name: "o", Protocol: "tcp", ClusterIP: net.ParseIP("10.96.100.8"), Port: 80,
		Endpoints: []netfilter.Endpoint{{IP: serverIP, Port: 8080}}}
	noUDPBackend := services()
	noUDPBackend[1].Endpoints = nil
	backend := (&net.UDPAddr{IP: serverIP, Port: 8080}).String()
	for i, c := range []struct {
		what string
		then []netfilter.Service
	}{
		// Layout numbers Services from 1 in order: one more in front
		// gives the same Service another index.
		{"made again", append([]netfilter.Service{other}, services()...)},
		{"without backends", noUDPBackend},
	} {
		if err := lb.Set(services()); err != nil {
			t.Fatal(err)
		}
		var from net.Addr
		if err := netns.Do(client, func() error {
			pc, err := net.ListenPacket("udp4", "0.0.0.0:0")
			if err != nil {
				return err
			}
			defer pc.Close()
			if _, err := pc.WriteTo([]byte("ping"), &net.UDPAddr{IP: clusterIP, Port: 80}); err != nil {
				return err
			}
			<-udp // the echo is queued; recvmsg4 runs when it is read
			if err := lb.Set(c.then); err != nil {
				return err
			}
			pc.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, from, err = pc.ReadFrom(make([]byte, 16))
			return err
		}); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if from.String() != backend {
			t.Errorf("Service %s: the reply shows %v, want the backend %s (stale entry dropped)", c.what, from, backend)
		}
		st, err := lb.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Stale != uint64(i+1) {
			t.Errorf("Service %s: %d stale entries dropped, want %d", c.what, st.Stale, i+1)
		}
	}
}
