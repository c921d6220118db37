package local

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/kerneltest"

	"github.com/cnibench/cnibench/internal/cleanup"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/wire"
)

// TestLinkRateShaping shapes the underlay to 100 Mbit/s through the
// link-rate knob, as a run does once the cluster is up, and checks that
// UDP goodput at saturation matches the line-rate bound of each
// encapsulation: payload / (pod packet + encapsulation + Ethernet header
// 14 + framing 24) of the line rate. Without the framing overhead the
// goodput would exceed the bound by about 1.6%. Reverting the knob must
// leave the underlay's qdiscs as they were before it.
func TestLinkRateShaping(t *testing.T) {
	kerneltest.RequireRoot(t)
	if err := probe.Require(probe.Veth, probe.TBF); err != nil {
		t.Skipf("skipped: %v", err)
	}
	const rate = 100_000_000
	for _, tc := range []struct {
		datapath string
		encap    int // bytes the encapsulation adds to the pod's IP packet
	}{
		{"host", 0},
		{"calico-routed", 0},
		{"flannel-vxlan", 50},
		{"calico-vxlan", 50},
		{"cilium", 50},
		{"flannel-udp", 28}, // outer IPv4 + UDP, added by flanneld in user space
		{"calico-ipip", 20},
		{"gre", 38},    // outer IPv4 + GRE (4) + inner Ethernet (gretap)
		{"geneve", 50}, // outer IPv4 + UDP + Geneve (8) + inner Ethernet
		// outer IPv4 + UDP + WireGuard header (16) + tag (16) = 60, plus
		// padding of the 1420-byte inner packet to a multiple of 16: 4.
		{"wireguard", 64},
	} {
		t.Run(tc.datapath, func(t *testing.T) {
			d, err := catalog.Lookup(tc.datapath)
			if err != nil {
				t.Fatal(err)
			}
			kerneltest.RequireFeatures(t, d)
			c := upClusterWith(t, Config{RunID: kerneltest.RunID(), Datapath: d, Kill: cleanup.KillInNetns})
			before := underlayQdiscs(t, c)
			env := &results.DatapathEnv{}
			s := &study.Study{Spec: study.Spec{Link: study.Link{Rate: "100mbit"}}}
			applied, err := knob.Apply(context.Background(), knob.Datapath, &knob.Target{Study: s, Cluster: c, Env: env, State: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			reverted := false
			revert := func() {
				if reverted {
					return
				}
				reverted = true
				if err := applied.Revert(); err != nil {
					t.Fatalf("revert link rate: %v", err)
				}
				if after := underlayQdiscs(t, c); after != before {
					t.Errorf("revert left the underlay's qdiscs changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			}
			defer revert()
			if env.LinkRate != rate {
				t.Errorf("env link rate %d, want %d", env.LinkRate, rate)
			}
			for _, n := range c.Nodes() {
				out, err := exec.Command("tc", "-n", n.ns, "qdisc", "show", "dev", UnderlayDev).CombinedOutput()
				if err != nil {
					t.Fatalf("tc qdisc show: %v: %s", err, out)
				}
				if s := string(out); !strings.Contains(s, "tbf 1: root") || !strings.Contains(s, "rate 100Mbit") || !strings.Contains(s, "overhead 24") {
					t.Errorf("%s: underlay qdisc is not tbf 1: 100Mbit overhead 24:\n%s", n.name, s)
				}
			}
			if os.Getenv("CNIBENCH_IN_VM") != "" {
				// Software emulation cannot saturate even 100 Mbit/s on
				// a small machine; the goodput check needs real CPUs.
				revert()
				t.Skip("skipped: goodput at line rate is not measurable in the emulated VM; qdisc and its revert checked")
			}
			servers, clients, err := c.ScalePods(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			mtu := podMTU(t, c, servers[0])
			payload := mtu - ipv4UDPHeaders
			bound := float64(rate) * float64(payload) / float64(mtu+tc.encap+14+wire.FramingOverhead)
			// Up to three tries, keeping the best: a loaded machine can
			// starve the shaper's timer or the receiver for a while, which
			// only ever lowers goodput. Every try must stay under the bound.
			// Seed 003's backends must come within 1% of their bound (the
			// paper's 923 and 937.8 Mbit/s are this bound at 1 Gbit/s);
			// the others within 20%.
			floor := 0.8
			if tc.datapath == "flannel-vxlan" || tc.datapath == "flannel-udp" {
				floor = 0.99
			}
			var best float64
			for try := 0; try < 3 && best < max(0.95, floor)*bound; try++ {
				got := udpGoodput(t, servers[0], clients[0], payload, 1.2*rate)
				t.Logf("%s: UDP goodput %.2f Mbit/s, line-rate bound %.2f Mbit/s (%.1f%%)", tc.datapath, got/1e6, bound/1e6, 100*got/bound)
				// Above the bound means framing is not charged (that
				// would give +1.6%).
				if got > 1.01*bound {
					t.Errorf("UDP goodput %.2f Mbit/s exceeds the line-rate bound %.2f Mbit/s", got/1e6, bound/1e6)
				}
				best = max(best, got)
			}
			if best < floor*bound {
				t.Errorf("best UDP goodput %.2f Mbit/s, want at least %.0f%% of the bound %.2f Mbit/s", best/1e6, 100*floor, bound/1e6)
			}
		})
	}
}

// underlayQdiscs is `tc qdisc show dev eth1` of both nodes.
func underlayQdiscs(t *testing.T, c *Cluster) string {
	t.Helper()
	var all string
	for _, n := range c.Nodes() {
		out, err := exec.Command("tc", "-n", n.ns, "qdisc", "show", "dev", UnderlayDev).CombinedOutput()
		if err != nil {
			t.Fatalf("tc qdisc show: %v: %s", err, out)
		}
		all += n.name + ": " + string(out)
	}
	return all
}

// udpGoodput sends srv payload-byte datagrams from cli at the offered
// rate (bit/s) and returns the payload rate (bit/s) received in the
// window [0.5 s, 2 s] after the first datagram, past the token bucket's
// initial burst. Datagrams are placed in the window by the kernel's
// receive time (SO_TIMESTAMPNS), not by when ReadMsgUDP returns: a
// reader stalled 15 ms across the window's start would count datagrams
// queued before it, 1% more goodput, as if framing were not charged.
func udpGoodput(t *testing.T, srv, cli *Pod, payload int, offered float64) float64 {
	t.Helper()
	addr := &net.UDPAddr{IP: srv.IP(), Port: 7300}
	var sc *net.UDPConn
	if err := netns.Do(srv.ns, func() (err error) {
		sc, err = net.ListenUDP("udp4", addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	_ = sc.SetReadBuffer(8 << 20)
	stampReceives(t, sc)
	var cc *net.UDPConn
	if err := netns.Do(cli.ns, func() (err error) {
		cc, err = net.DialUDP("udp4", nil, addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	// Offer more than the line rate, paced by the clock: enough to keep
	// the shaper saturated without a busy loop starving the softirqs that
	// forward and shape on a small machine.
	var stop atomic.Bool
	go func() {
		msg := make([]byte, payload)
		start, sent := time.Now(), 0
		for !stop.Load() {
			due := int(offered / 8 * time.Since(start).Seconds() / float64(payload))
			for ; sent < due; sent++ {
				_, _ = cc.Write(msg)
			}
			time.Sleep(500 * time.Microsecond)
		}
	}()
	defer stop.Store(true)
	buf, oob := make([]byte, 65536), make([]byte, unix.CmsgSpace(16))
	_ = sc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, oobn, _, _, err := sc.ReadMsgUDP(buf, oob)
	if err != nil {
		t.Fatalf("no datagram arrived: %v", err)
	}
	first := receiveTime(t, oob[:oobn])
	from, to := first.Add(500*time.Millisecond), first.Add(2*time.Second)
	// The window ends at the first datagram received after it; the
	// deadline only bounds a sender that stopped.
	_ = sc.SetReadDeadline(to.Add(5 * time.Second))
	var bytes int
	for {
		n, oobn, _, _, err := sc.ReadMsgUDP(buf, oob)
		if err != nil {
			break
		}
		at := receiveTime(t, oob[:oobn])
		if at.After(to) {
			break
		}
		if !at.Before(from) {
			bytes += n
		}
	}
	return float64(bytes) * 8 / to.Sub(from).Seconds()
}

// stampReceives asks the kernel to stamp each datagram with its receive
// time.
func stampReceives(t *testing.T, c *net.UDPConn) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatalf("SO_TIMESTAMPNS: %v", serr)
	}
}

// receiveTime is the SCM_TIMESTAMPNS in a datagram's control messages.
func receiveTime(t *testing.T, oob []byte) time.Time {
	t.Helper()
	cms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		t.Fatalf("control messages: %v", err)
	}
	for _, cm := range cms {
		if cm.Header.Level == unix.SOL_SOCKET && cm.Header.Type == unix.SCM_TIMESTAMPNS && len(cm.Data) >= 16 {
			return time.Unix(int64(binary.NativeEndian.Uint64(cm.Data)), int64(binary.NativeEndian.Uint64(cm.Data[8:])))
		}
	}
	t.Fatal("datagram without SCM_TIMESTAMPNS")
	return time.Time{}
}
