package pktgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
)

// header is pktgen_hdr as net/core/pktgen.c writes it.
func header(seq uint32, built time.Time) []byte {
	b := make([]byte, HeaderLen)
	binary.BigEndian.PutUint32(b, Magic)
	binary.BigEndian.PutUint32(b[4:], seq)
	binary.BigEndian.PutUint32(b[8:], uint32(built.Unix()))
	binary.BigEndian.PutUint32(b[12:], uint32(built.Nanosecond()/1000))
	return b
}

func TestParseHeader(t *testing.T) {
	built := time.Date(2026, 12, 2, 13, 0, 0, 123456000, time.UTC)
	h, err := ParseHeader(append(header(7, built), "payload"...))
	if err != nil || h.Seq != 7 || !h.Built.Equal(built) {
		t.Fatalf("%+v %v", h, err)
	}
	if h, err := ParseHeader(header(1, time.Unix(0, 0))); err != nil || !h.Built.IsZero() {
		t.Errorf("NO_TIMESTAMP: %+v %v", h, err)
	}
	for name, b := range map[string][]byte{
		"short":      header(1, built)[:15],
		"magic":      append([]byte{0, 0, 0, 0}, header(1, built)[4:]...),
		"usec range": append(header(1, built)[:12], 0, 0x0f, 0x42, 0x40), // 1e6
	} {
		if _, err := ParseHeader(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add(header(1, time.Unix(1764680000, 5000)))
	f.Add([]byte{0xbe, 0x9b, 0xe9, 0x55})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			return
		}
		if h.Built.IsZero() {
			if !bytes.Equal(b[8:16], make([]byte, 8)) {
				t.Fatalf("%x read as no timestamp", b[:16])
			}
			return
		}
		if got := header(h.Seq, h.Built); !bytes.Equal(got, b[:HeaderLen]) {
			t.Fatalf("%x read as %+v, which writes %x", b[:HeaderLen], h, got)
		}
	})
}

// RFC 3550's estimator on a known series: transits 1, 3, 2, 2 ms give
// |D| = 2, 1, 0 and J = 2/16, then (1 - J)/16 more, then -J/16.
func TestJitterSeries(t *testing.T) {
	base := time.Unix(1764680000, 0)
	var s jitter
	for i, ms := range []int{1, 3, 2, 2} {
		built := base.Add(time.Duration(i) * 10 * time.Millisecond)
		s.add(Header{Seq: uint32(i), Built: built}, built.Add(time.Duration(ms)*time.Millisecond))
	}
	j := 2.0 / 16
	j += (1 - j) / 16
	j -= j / 16
	if s.Timed != 4 || s.OutOfOrder != 0 || math.Abs(s.Jitter.Seconds()*1e3-j) > 1e-6 {
		t.Fatalf("%+v, want jitter %.6f ms", s.Received, j)
	}
	s.add(Header{Seq: 1, Built: base}, base.Add(2*time.Millisecond))
	s.add(Header{Seq: 9}, base)
	if s.OutOfOrder != 1 || s.Other != 1 || s.Timed != 5 {
		t.Fatalf("a late packet and an unstamped one: %+v", s.Received)
	}
}

// Streams (source ports) are timed and ordered each on its own: two
// interleaved streams, each in order with its own sequence, one with
// steady transits and one whose transits alternate 0/2 ms, give no packet
// out of order and the mean of their jitters (iperf3 -P's sum).
func TestStreams(t *testing.T) {
	base := time.Unix(1764680000, 0)
	var s streams
	var alone jitter
	for i := range 40 {
		built := base.Add(time.Duration(i) * time.Millisecond)
		s.add(5201, Header{Seq: uint32(i), Built: built}, built.Add(time.Millisecond))
		late := built.Add(time.Duration(i%2) * 2 * time.Millisecond)
		s.add(49153, Header{Seq: uint32(i), Built: built}, late)
		alone.add(Header{Seq: uint32(i), Built: built}, late)
	}
	s.other++
	r := s.received()
	if r.Timed != 80 || r.OutOfOrder != 0 || r.Streams != 2 || r.Other != 1 || r.Jitter != alone.Jitter/2 {
		t.Fatalf("%+v, want 80 timed in 2 streams, none out of order, jitter %v (half the alternating stream's)", r, alone.Jitter/2)
	}
}

func TestReceiveTime(t *testing.T) {
	oob := make([]byte, unix.CmsgSpace(16))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(16))
	binary.NativeEndian.PutUint64(oob[unix.CmsgLen(0):], 1764680000)
	binary.NativeEndian.PutUint64(oob[unix.CmsgLen(0)+8:], 42)
	if got := receiveTime(oob); !got.Equal(time.Unix(1764680000, 42)) {
		t.Fatalf("got %v", got)
	}
	h.Type = unix.SCM_TIMESTAMP
	if got := receiveTime(oob); !got.IsZero() {
		t.Errorf("another control message read as a time: %v", got)
	}
	if got := receiveTime(oob[:5]); !got.IsZero() {
		t.Errorf("a cut message read as a time: %v", got)
	}
}

// A receiver in a scratch namespace, fed over its loopback by datagrams
// stamped as pktgen stamps them: transits alternating between ~0 and
// 10 ms give |D| of 10 ms each, so J after n packets is
// 10 ms x (1 - (15/16)^(n-1)); one datagram sent late in sequence is
// out of order, one without the header is counted as other. A second
// stream (source port) of steady transits halves the flow's jitter.
func TestReceiverJitter(t *testing.T) {
	kerneltest.RequireRoot(t)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "rx")
	var conn *net.UDPConn
	err := netns.Do(ns, func() error {
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err == nil {
			conn, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5201})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := Listen(ns, 5201, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A second stream from another source port, sent in its own
	// sequence with a steady transit: its own jitter is ~0, so the
	// flow's (the mean) is half the first stream's.
	var conn2 *net.UDPConn
	if err := netns.Do(ns, func() (err error) {
		conn2, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5201})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	const n = 60
	for i := range n {
		if _, err := conn2.Write(header(uint32(i), time.Now())); err != nil {
			t.Fatal(err)
		}
		built := time.Now()
		if i%2 == 1 {
			built = built.Add(-10 * time.Millisecond)
		}
		seq := uint32(i + 10)
		if i == n-1 {
			seq = 1 // late
		}
		if _, err := conn.Write(append(header(seq, built), make([]byte, 100)...)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := conn.Write([]byte("not pktgen")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	got, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	want := 10 * (1 - math.Pow(15.0/16, n-1)) / 2
	ms := got.Jitter.Seconds() * 1e3
	if got.Timed != 2*n || got.Streams != 2 || got.OutOfOrder != 1 || got.Other != 1 || math.Abs(ms-want) > 0.5 {
		t.Fatalf("received %+v (jitter %.3f ms), want %d timed in 2 streams, 1 out of order, 1 other, jitter %.3f ms", got, ms, 2*n, want)
	}
	// The port is free again: Stop closed the socket.
	r2, err := Listen(ns, 5201, nil)
	if err != nil {
		t.Fatalf("port still held: %v", err)
	}
	if _, err := r2.Stop(); err != nil {
		t.Fatal(err)
	}
}

// A receiver given CPUs reads on a thread of its own allowed only those
// (iperf3's server, which it stands in for, runs pinned there), and the
// thread ends with it.
func TestReceiverPinned(t *testing.T) {
	kerneltest.RequireRoot(t)
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil || all.Count() < 2 {
		t.Skipf("needs two CPUs to tell a pinned thread from the others (%d, %v)", all.Count(), err)
	}
	cpu := -1
	for c := range 1024 {
		if all.IsSet(c) {
			cpu = c // the last CPU this process may use
		}
	}
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "rx")
	want := strconv.Itoa(cpu)
	before := threadsAllowed(t, want)
	r, err := Listen(ns, 5201, cpuset.Set{cpu})
	if err != nil {
		t.Fatal(err)
	}
	during := threadsAllowed(t, want)
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	// The runtime ends a locked thread shortly after its goroutine; on a
	// loaded machine "shortly" is not bounded by 2 s.
	after := threadsAllowed(t, want)
	for deadline := time.Now().Add(10 * time.Second); after > before && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		after = threadsAllowed(t, want)
	}
	if during != before+1 || after != before {
		t.Fatalf("threads allowed only CPU %s: %d before, %d while receiving, %d after; want one more while receiving", want, before, during, after)
	}
	if _, err := Listen(ns, 5202, cpuset.Set{cpuset.MaxCPU}); err == nil {
		t.Fatalf("a receiver on CPU %d started", cpuset.MaxCPU)
	}
}

// threadsAllowed counts this process's threads allowed exactly cpus.
func threadsAllowed(t *testing.T, cpus string) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) == cpus {
				n++
			}
		}
	}
	return n
}

// nameThread names the calling thread alone: the comm perf reports for
// its samples, while the process keeps its own name.
func TestNameThread(t *testing.T) {
	proc, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		// Never unlocked: the renamed thread ends with the goroutine.
		runtime.LockOSThread()
		if err := nameThread(ReceiverComm); err != nil {
			t.Error(err)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/comm", unix.Gettid()))
		if err != nil {
			t.Error(err)
		}
		got <- strings.TrimSpace(string(b))
	}()
	if name := <-got; name != ReceiverComm {
		t.Errorf("thread named %q, want %q", name, ReceiverComm)
	}
	if after, _ := os.ReadFile("/proc/self/comm"); !bytes.Equal(after, proc) {
		t.Errorf("the process was renamed %q (was %q)", after, proc)
	}
}

// A receiver reads on a thread named ReceiverComm, whose samples CPU
// cost per packet counts (cpp's components.yaml) where it leaves out
// cnibench's other threads; the name goes with the thread.
func TestReceiverThreadNamed(t *testing.T) {
	kerneltest.RequireRoot(t)
	id := kerneltest.RunID()
	ns := kerneltest.Netns(t, kerneltest.Journal(t, id), id, "rx")
	before := threadsNamed(t, ReceiverComm)
	r, err := Listen(ns, 5201, nil)
	if err != nil {
		t.Fatal(err)
	}
	during := threadsNamed(t, ReceiverComm)
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	after := threadsNamed(t, ReceiverComm)
	for deadline := time.Now().Add(10 * time.Second); after > before && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		after = threadsNamed(t, ReceiverComm)
	}
	if during != before+1 || after != before {
		t.Fatalf("threads named %s: %d before, %d while receiving, %d after; want one more while receiving", ReceiverComm, before, during, after)
	}
}

// threadsNamed counts this process's threads whose comm is name.
func threadsNamed(t *testing.T, name string) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/comm")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == name {
			n++
		}
	}
	return n
}
