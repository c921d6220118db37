// Package pktgen drives the kernel's packet generator
// (Documentation/networking/pktgen.rst) as a UDP sender from inside a
// pod's network namespace: seed 001's sender, which builds packets in
// the kernel and hands them to the device, past the socket layer and
// user space. Each network namespace has its own generator
// (/proc/net/pktgen, one kpktgend thread per CPU).
package pktgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/cpuset"
)

// Headers are the bytes pktgen's pkt_size counts besides the UDP payload:
// Ethernet 14, IPv4 20 and UDP 8 (the frame without its FCS).
const Headers = 42

// Flow is one sender: from a client pod's device to a server.
type Flow struct {
	// Netns is the client pod's namespace, Dev its device.
	Netns, Dev string
	Src, Dst   net.IP
	// DstMAC is the next hop's address on Dev (NextHopMAC).
	DstMAC           net.HardwareAddr
	SrcPort, DstPort int
	// Payload is the UDP payload per datagram, bytes.
	Payload int
	// Rate is the offered UDP payload, bit/s (as iperf3 -b counts it).
	Rate     float64
	Duration time.Duration
	// CPUs are the CPUs the flow may be sent from: the client's pinned
	// CPUs, or its node's, as its iperf3 client would run there. Each
	// generator thread runs on one CPU (kpktgend_N on CPU N), so this
	// chooses the threads; nil means any.
	CPUs cpuset.Set
}

// PPS is the flow's packet rate.
func (f Flow) PPS() float64 { return f.Rate / 8 / float64(f.Payload) }

// Count is the packets the flow sends: its rate over its duration.
func (f Flow) Count() uint64 { return uint64(math.Ceil(f.PPS() * f.Duration.Seconds())) }

func (f Flow) validate() error {
	switch {
	case f.Dev == "":
		return errors.New("pktgen: no device")
	case f.Src.To4() == nil || f.Dst.To4() == nil:
		return fmt.Errorf("pktgen: %v -> %v: IPv4 addresses only", f.Src, f.Dst)
	case len(f.DstMAC) != 6:
		return fmt.Errorf("pktgen: next-hop address %q is not an Ethernet address", f.DstMAC)
	case f.Payload < 18 || f.Payload+Headers > 65535:
		// pktgen's smallest frame is 60 bytes; its largest is what a
		// 16-bit IP length can say.
		return fmt.Errorf("pktgen: UDP payload %d bytes out of 18..%d", f.Payload, 65535-Headers)
	case f.SrcPort <= 0 || f.SrcPort > 65535 || f.DstPort <= 0 || f.DstPort > 65535:
		return fmt.Errorf("pktgen: ports %d -> %d out of range", f.SrcPort, f.DstPort)
	case f.Rate <= 0 || f.Duration <= 0 || f.Count() == 0:
		return fmt.Errorf("pktgen: rate %g bit/s for %v sends nothing", f.Rate, f.Duration)
	}
	return nil
}

// Command is one write to a file of the namespace's /proc/net/pktgen.
type Command struct{ File, Text string }

// Commands are the writes that add the flow to kernel thread thread
// (kpktgend_N) as generator device name (Dev, or Dev@K where one
// namespace sends several flows from Dev: pktgen sends a device's packets
// out of the interface named before the @), with the flow's packets,
// addresses, ports and pace. No clone_skb: each packet is built anew,
// which every device takes.
func (f Flow) Commands(thread, name string) ([]Command, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if dev, _, _ := strings.Cut(name, "@"); dev != f.Dev || len(name) >= maxName {
		return nil, fmt.Errorf("pktgen: generator name %q is not %s or %s@K of under %d bytes", name, f.Dev, f.Dev, maxName)
	}
	dev := func(format string, a ...any) Command { return Command{name, fmt.Sprintf(format, a...)} }
	return []Command{
		{thread, "add_device " + name},
		dev("count %d", f.Count()),
		dev("clone_skb 0"),
		dev("pkt_size %d", f.Payload+Headers),
		dev("ratep %d", uint64(math.Round(f.PPS()))),
		dev("dst %s", f.Dst.To4()),
		dev("dst_mac %s", f.DstMAC),
		dev("src_min %s", f.Src.To4()),
		dev("src_max %s", f.Src.To4()),
		dev("udp_src_min %d", f.SrcPort),
		dev("udp_src_max %d", f.SrcPort),
		dev("udp_dst_min %d", f.DstPort),
		dev("udp_dst_max %d", f.DstPort),
	}, nil
}

// maxName bounds a generator device's name (pktgen_dev.odevname, 32
// bytes with its NUL).
const maxName = 32

// Sent is what a device's generator reports after a run.
type Sent struct {
	Packets, Errors uint64
	// Elapsed is the run's time as pktgen measured it.
	Elapsed time.Duration
	// Started and Stopped are when the generator began and ended on the
	// kernel's monotonic clock (ktime_get, which the report prints as
	// "started: Nus  stopped: Nus"): every namespace's generators share
	// it, so flows sent together lie on one timeline even where their
	// threads woke to the start at different times. Zero where the
	// report does not say.
	Started, Stopped time.Duration
}

// Window is the time flows sent together were sending: from the first
// generator's start to the last one's stop where every report says
// both, else the longest run. Their packets crossed the path over that
// window, not over any one run: a thread that noticed the start late
// (up to its 100 ms poll, waitRunning) leaves its flow's run shorter
// than the whole by as much.
func Window(sent []Sent) time.Duration {
	var first, last, longest time.Duration
	timed := len(sent) > 0
	for i, s := range sent {
		longest = max(longest, s.Elapsed)
		if s.Started <= 0 || s.Stopped < s.Started {
			timed = false
		}
		if i == 0 || s.Started < first {
			first = s.Started
		}
		last = max(last, s.Stopped)
	}
	if !timed {
		return longest
	}
	return max(last-first, longest)
}

var (
	sofarRE  = regexp.MustCompile(`pkts-sofar:\s*(\d+)\s+errors:\s*(\d+)`)
	resultRE = regexp.MustCompile(`(?m)^Result:\s*(.*)$`)
	okRE     = regexp.MustCompile(`^OK:\s*(\d+)\(`)
	timesRE  = regexp.MustCompile(`started:\s*(\d+)us\s+stopped:\s*(\d+)us`)
)

// ParseResult reads /proc/net/pktgen/DEV after a run: the packets sent
// and errors ("pkts-sofar: N  errors: E"), the result line ("Result:
// OK: USEC(...)"; any other result is pktgen's own error message) and,
// where the report has them and they make sense, the run's start and
// stop times.
func ParseResult(b []byte) (Sent, error) {
	var s Sent
	m := sofarRE.FindSubmatch(b)
	if m == nil {
		return s, errors.New("pktgen: no pkts-sofar in the device's report")
	}
	var err1, err2 error
	s.Packets, err1 = strconv.ParseUint(string(m[1]), 10, 64)
	s.Errors, err2 = strconv.ParseUint(string(m[2]), 10, 64)
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("pktgen: bad counters %q", m[0])
	}
	r := resultRE.FindSubmatch(b)
	if r == nil {
		return s, errors.New("pktgen: no result line in the device's report")
	}
	ok := okRE.FindSubmatch(r[1])
	if ok == nil {
		return s, fmt.Errorf("pktgen: %s", r[1])
	}
	elapsed, err := micros(ok[1])
	if err != nil {
		return s, fmt.Errorf("pktgen: elapsed: %w", err)
	}
	s.Elapsed = elapsed
	if started, stopped, ok := times(b); ok {
		s.Started, s.Stopped = started, stopped
	}
	return s, nil
}

// HasStarted reports whether a device's report (/proc/net/pktgen/DEV) says
// its generator has started: pktgen_run sets "started:" to the time, and
// a device added for this run shows 0 until then (while it runs,
// "stopped:" is the time of the read).
func HasStarted(b []byte) bool {
	_, _, ok := times(b)
	return ok
}

// times is a report's "started: Nus  stopped: Nus", where both are read
// and make sense: a start, and a stop no earlier.
func times(b []byte) (started, stopped time.Duration, ok bool) {
	t := timesRE.FindSubmatch(b)
	if t == nil {
		return 0, 0, false
	}
	started, err1 := micros(t[1])
	stopped, err2 := micros(t[2])
	if err1 != nil || err2 != nil || started <= 0 || stopped < started {
		return 0, 0, false
	}
	return started, stopped, true
}

// micros reads a count of microseconds that fits a time.Duration.
func micros(b []byte) (time.Duration, error) {
	us, err := strconv.ParseUint(string(b), 10, 63)
	if err != nil || us > uint64(math.MaxInt64/int64(time.Microsecond)) {
		return 0, fmt.Errorf("bad time %q us", b)
	}
	return time.Duration(us) * time.Microsecond, nil
}
