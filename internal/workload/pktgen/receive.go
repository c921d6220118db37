package pktgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/netns"
)

// What the receiver does and why: pktgen stamps every packet it builds
// (clone_skb 0) with a sequence number and the time of day it built it
// (struct pktgen_hdr at the start of the UDP payload, net/core/pktgen.c:
// magic, seq_num, tv_sec, tv_usec, big-endian). All namespaces share the
// kernel's clock, so a socket in the server pod that asks for the
// kernel's receive time (SO_TIMESTAMPNS) sees each packet's transit
// time, and from it the interarrival jitter iperf3 reports for its own
// UDP stream (RFC 3550 6.4.1: J += (|D| - J)/16 over consecutive
// packets, D the change in transit time). The socket also stands where
// iperf3's server would: the datagrams reach a listener instead of
// drawing ICMP port-unreachable replies.

// Magic is pktgen_hdr's pgh_magic.
const Magic = 0xbe9be955

// HeaderLen is the bytes of pktgen_hdr.
const HeaderLen = 16

// Header is what pktgen writes at the start of a packet's UDP payload.
type Header struct {
	Seq uint32
	// Built is when pktgen built the packet (microseconds; zero when
	// pktgen was told NO_TIMESTAMP).
	Built time.Time
}

// ParseHeader reads pktgen's header from the start of a UDP payload.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("pktgen header: %d bytes, want %d", len(b), HeaderLen)
	}
	if m := binary.BigEndian.Uint32(b); m != Magic {
		return Header{}, fmt.Errorf("pktgen header: magic %#x, want %#x", m, uint32(Magic))
	}
	usec := binary.BigEndian.Uint32(b[12:])
	if usec >= 1e6 {
		return Header{}, fmt.Errorf("pktgen header: %d microseconds", usec)
	}
	sec := binary.BigEndian.Uint32(b[8:])
	h := Header{Seq: binary.BigEndian.Uint32(b[4:])}
	if sec != 0 || usec != 0 {
		// Unsigned: tv_sec wraps in 2106 read so, in 2038 read signed.
		h.Built = time.Unix(int64(sec), int64(usec)*1000)
	}
	return h, nil
}

// Received is what a receiver saw of its flow.
type Received struct {
	// Timed is the packets read with pktgen's header and both times;
	// Jitter is computed over them, in arrival order. The socket may
	// drop packets when its reader falls behind: the device counter, not
	// this, says what arrived.
	Timed uint64
	// Jitter is RFC 3550's interarrival jitter at the end of the flow
	// (iperf3's definition); valid when Timed >= 2. A flow of several
	// streams (source ports: one pktgen device each, with its own
	// sequence) gives the mean of their jitters, as iperf3 sums its
	// parallel streams' (iperf_api.c).
	Jitter time.Duration
	// Streams is how many streams have a jitter (two timed packets).
	Streams int
	// OutOfOrder counts packets whose sequence number is below one read
	// before them in the same stream.
	OutOfOrder uint64
	// Other counts datagrams without pktgen's header or a receive time.
	Other uint64
}

// streams keeps a jitter per source port: each pktgen device numbers
// and times its own packets.
type streams struct {
	by    map[int]*jitter
	other uint64 // datagrams without pktgen's header
}

func (s *streams) add(port int, h Header, arrived time.Time) {
	if s.by == nil {
		s.by = map[int]*jitter{}
	}
	j := s.by[port]
	if j == nil {
		j = &jitter{}
		s.by[port] = j
	}
	j.add(h, arrived)
}

// received sums the streams: counts added, jitter the mean of theirs.
func (s *streams) received() Received {
	r := Received{Other: s.other}
	var sum time.Duration
	for _, j := range s.by {
		r.Timed += j.Timed
		r.OutOfOrder += j.OutOfOrder
		r.Other += j.Other
		if j.Timed >= 2 {
			r.Streams++
			sum += j.Jitter
		}
	}
	if r.Streams > 0 {
		r.Jitter = sum / time.Duration(r.Streams)
	}
	return r
}

// jitter accumulates Received from packets in arrival order.
type jitter struct {
	Received
	j           float64 // seconds
	prevTransit float64
	maxSeq      uint32
}

func (s *jitter) add(h Header, arrived time.Time) {
	if h.Built.IsZero() || arrived.IsZero() {
		s.Other++
		return
	}
	transit := arrived.Sub(h.Built).Seconds()
	if s.Timed > 0 {
		s.j += (math.Abs(transit-s.prevTransit) - s.j) / 16
		if h.Seq < s.maxSeq {
			s.OutOfOrder++
		}
	}
	s.prevTransit = transit
	s.maxSeq = max(s.maxSeq, h.Seq)
	s.Timed++
	s.Jitter = time.Duration(s.j * float64(time.Second))
}

// Receiver reads one flow's datagrams in the server's namespace, each
// stream (source port) on its own.
type Receiver struct {
	conn *net.UDPConn
	stop chan struct{}
	once sync.Once
	done chan struct{}
	// got and err belong to read until done is closed.
	got streams
	err error
}

// rcvBuf is the socket's receive buffer. The kernel doubles it and
// charges each datagram its buffer's true size (~2.3 KB for 1500 bytes):
// ~3500 datagrams, 28 ms at 1.5 Gbit/s and 4 ms at 10 Gbit/s, many
// polls (pollEvery) of slack for a reader briefly off the CPU.
const rcvBuf = 4 << 20

// Listen opens a UDP socket on port in namespace ns and starts reading
// it on cpus (nil: any CPU), where iperf3's server would run: the
// server's pinned CPUs, or its node's.
func Listen(ns string, port int, cpus cpuset.Set) (*Receiver, error) {
	var conn *net.UDPConn
	err := netns.Do(ns, func() error {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: port})
		conn = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pktgen receiver on port %d in %s: %w", port, ns, err)
	}
	if err := setSockopts(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("pktgen receiver on port %d in %s: %w", port, ns, err)
	}
	r := &Receiver{conn: conn, stop: make(chan struct{}), done: make(chan struct{})}
	pinned := make(chan error, 1)
	go func() {
		defer close(r.done)
		// A thread of its own, discarded with the receiver rather than
		// handed on pinned (and named) to other goroutines.
		if err := netns.DoPinned("", cpus, func() error {
			if err := nameThread(ReceiverComm); err != nil {
				return err
			}
			pinned <- nil
			r.read()
			return nil
		}); err != nil {
			pinned <- err // read never ran
		}
	}()
	if err := <-pinned; err != nil {
		conn.Close()
		return nil, fmt.Errorf("pktgen receiver on port %d in %s: %w", port, ns, err)
	}
	return r, nil
}

// ReceiverComm is the name (comm) of a receiver's thread. CPU cost per
// packet counts the samples of the workload's processes by their names
// (cpp's components.yaml), and the receive system calls and copies an
// iperf3 server would make are this thread's: under the process's name
// (cnibench) they were left out with the rest of cnibench's threads.
const ReceiverComm = "cnb-pktrecv"

// nameThread names the calling thread: its comm, which perf reports for
// its samples, not the process's (as prctl PR_SET_NAME would). The
// thread must be locked to the goroutine and never handed on.
func nameThread(name string) error {
	if err := os.WriteFile("/proc/thread-self/comm", []byte(name), 0); err != nil {
		return fmt.Errorf("name the receiver's thread %s: %w", name, err)
	}
	return nil
}

// setSockopts asks for kernel receive times and a buffer past rmem_max
// (SO_RCVBUFFORCE: root only, as the run is).
func setSockopts(conn *net.UDPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = errors.Join(
			os.NewSyscallError("SO_TIMESTAMPNS", unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)),
			os.NewSyscallError("SO_RCVBUFFORCE", unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf)))
	})
	return errors.Join(err, serr)
}

// read takes datagrams in batches (recvmmsg), only their first bytes
// (the header is all it needs), until the queue is empty, then sleeps
// for pollEvery: blocking reads could wake the reader for each packet,
// and the CPU it takes is taken from the path and the generator; this
// bounds the wake-ups at a thousand a second whatever the rate. The
// receive times are the kernel's, so reading late changes none of them.
func (r *Receiver) read() {
	pc := ipv4.NewPacketConn(r.conn)
	msgs := make([]ipv4.Message, 64)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, HeaderLen)}
		msgs[i].OOB = make([]byte, unix.CmsgSpace(16))
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		stopping := false
		select {
		case <-r.stop:
			stopping = true // one more drain of what is queued
		case <-tick.C:
		}
		for {
			n, err := pc.ReadBatch(msgs, unix.MSG_DONTWAIT)
			for _, m := range msgs[:max(n, 0)] { // n is -1 with an error
				h, herr := ParseHeader(m.Buffers[0][:min(m.N, HeaderLen)])
				from, ok := m.Addr.(*net.UDPAddr)
				if herr != nil || !ok {
					r.got.other++
					continue
				}
				r.got.add(from.Port, h, receiveTime(m.OOB[:m.NN]))
			}
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			if err != nil {
				r.err = err
				return
			}
		}
		if stopping {
			return
		}
	}
}

// pollEvery is how long the reader sleeps once the queue is empty: at
// 1.5 Gbit/s of 1500-byte datagrams, 1 ms queues ~125 of them, well
// within the buffer (rcvBuf).
const pollEvery = time.Millisecond

// receiveTime is the SCM_TIMESTAMPNS in a datagram's control messages,
// or the zero time.
func receiveTime(oob []byte) time.Time {
	cms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, cm := range cms {
		if cm.Header.Level == unix.SOL_SOCKET && cm.Header.Type == unix.SCM_TIMESTAMPNS && len(cm.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(cm.Data))
			nsec := int64(binary.NativeEndian.Uint64(cm.Data[8:]))
			return time.Unix(sec, nsec)
		}
	}
	return time.Time{}
}

// Stop reads what is still queued on the socket, closes it and says
// what was received. A second call returns the same.
func (r *Receiver) Stop() (Received, error) {
	r.once.Do(func() { close(r.stop) })
	<-r.done
	r.conn.Close()
	if r.err != nil {
		return r.got.received(), fmt.Errorf("pktgen receiver: %w", r.err)
	}
	return r.got.received(), nil
}
