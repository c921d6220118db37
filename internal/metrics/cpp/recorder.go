package cpp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/proc"
)

// DefaultPeriodNs is the cpu-clock sample period: one sample per ms of
// CPU time (1 kHz per CPU), fine enough for components of a few % over a
// window of seconds and small enough in cost (see docs/workloads.md).
// The cycles period (Cycles.Period) is chosen to match it at 2 GHz.
const DefaultPeriodNs = 1_000_000

// Check reports whether perf can sample the machine. A perf on PATH is
// not enough: Ubuntu's linux-tools-common installs a /usr/bin/perf that
// only runs the perf of the running kernel's linux-tools package, and
// without that package fails every call ("WARNING: perf not found for
// kernel ..."), so a run would fail every trial that samples.
func Check() error {
	path, err := exec.LookPath("perf")
	if err != nil {
		return errors.New("perf is not installed; install it (Debian: apt-get install linux-perf) to measure CPU cost per packet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput(); err != nil {
		return fmt.Errorf("perf (%s) does not run (perf --version: %w: %s); install the perf of this kernel "+
			"(Debian: apt-get install linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)) to measure CPU cost per packet",
			path, err, firstLine(out))
	}
	if os.Geteuid() != 0 {
		return errors.New("CPU cost per packet samples every CPU with perf and needs root")
	}
	return nil
}

// Recorder samples the machine with perf over a window and counts
// packets on the given interfaces. Start and Stop bracket the window.
type Recorder struct {
	Map *Map
	// Event is what perf samples; the zero value means CPUClock.
	Event Event
	// Ifaces are the devices whose packets are counted (the measured
	// server pods' eth0): packets are full-sized TCP segments of the
	// busier direction (wirePackets), so TCP data (not ACKs) is counted
	// whichever end sends.
	Ifaces []netns.Iface

	dir    string
	perf   engine.Process
	before []ifstats.Counters
}

// Result is a window's CPP metrics and its breakdown.
type Result struct {
	Metrics   map[string]float64 `json:"metrics"`
	Breakdown Breakdown          `json:"breakdown"`
	// Event is what was sampled; its Unit is the breakdown's.
	Event Event `json:"event"`
}

// Start reads the counters and starts perf record on every CPU.
func (r *Recorder) Start(ctx context.Context) error {
	if r.Event.Name == "" {
		r.Event = CPUClock
	}
	if r.Event.Period <= 0 || r.Event.Unit == "" {
		return fmt.Errorf("perf event %s: no period or unit", r.Event.Name)
	}
	dir, err := os.MkdirTemp("", "cnb-perf-")
	if err != nil {
		return err
	}
	r.dir = dir
	r.before = nil
	for _, ifc := range r.Ifaces {
		c, err := ifstats.Read(ifc)
		if err != nil {
			r.cleanup()
			return err
		}
		r.before = append(r.before, c)
	}
	argv := []string{"perf", "record", "-a", "-q", "-e", r.Event.Name, "-c", strconv.Itoa(r.Event.Period), "-o", filepath.Join(dir, "perf.data")}
	p, err := proc.Start(ctx, r.perfNetns(), nil, argv)
	if err != nil {
		r.cleanup()
		return fmt.Errorf("start perf: %w", err)
	}
	r.perf = p
	return nil
}

// perfNetns is the namespace perf runs in: the first measured device's,
// when it is a named namespace of this machine (a local run's pod).
// perf record -a samples every CPU from any network namespace, and a
// process inside a run's namespace is found and killed by cleanup after
// the run is killed (kill -9 mid-window), where one in the host's would
// keep sampling and writing. On a kube node (pods are "pod:NS/NAME") it
// runs in the agent's namespace, and the agent session stops it.
func (r *Recorder) perfNetns() string {
	if len(r.Ifaces) > 0 && r.Ifaces[0].Netns != "" && netns.Exists(r.Ifaces[0].Netns) {
		return r.Ifaces[0].Netns
	}
	return ""
}

// Stop ends perf (SIGTERM: perf writes its data and exits), reads the
// counters and attributes the samples.
func (r *Recorder) Stop(ctx context.Context) (Result, error) {
	defer r.cleanup()
	if r.perf == nil {
		return Result{}, errors.New("perf recorder was not started")
	}
	var after []ifstats.Counters
	var rerr error
	for _, ifc := range r.Ifaces {
		c, err := ifstats.Read(ifc)
		rerr = errors.Join(rerr, err)
		after = append(after, c)
	}
	r.perf.Stop()
	_, stderr, werr := r.perf.Wait()
	r.perf = nil
	if rerr != nil {
		return Result{}, rerr
	}
	data := filepath.Join(r.dir, "perf.data")
	if _, err := os.Stat(data); err != nil {
		return Result{}, fmt.Errorf("perf record wrote no data (%v): %s", werr, clip(string(stderr)))
	}
	// In perf record's namespace too: a run killed while perf report
	// reads a large recording leaves a process cleanup finds there.
	rep, err := proc.Start(ctx, r.perfNetns(), nil, []string{"perf", "report", "-i", data, "--stdio", "--no-children",
		"--sort", "comm,sym", "-F", "sample,comm,sym", "-t", ";", "-q"})
	if err != nil {
		return Result{}, fmt.Errorf("perf report: %w", err)
	}
	out, _, err := rep.Wait()
	if err != nil {
		return Result{}, fmt.Errorf("perf report: %w", err)
	}
	prof, err := ParseReport(out)
	if err != nil {
		return Result{}, err
	}
	b := r.Map.Attribute(prof, float64(r.Event.Period))
	var wire, skbs float64
	for i := range after {
		d := ifstats.Delta(r.before[i], after[i])
		if d.TxBytes > d.RxBytes {
			d.RxBytes, d.RxPackets = d.TxBytes, d.TxPackets
		}
		wire += wirePackets(d)
		skbs += float64(d.RxPackets)
	}
	if wire == 0 {
		return Result{}, errors.New("no packets counted on the measured interfaces during the window")
	}
	m := b.PerPacket(wire, r.Event.Unit)
	m[MetricSKBs] = skbs
	return Result{Metrics: m, Breakdown: b, Event: r.Event}, nil
}

// Header bytes of a TCP/IPv4 segment beyond its payload: the Ethernet
// header (in a device's byte count, not in its MTU) and the IPv4 and TCP
// headers with timestamps (Linux's default), so a full segment's payload
// is MTU - 52 (1448 at 1500).
const (
	ethHeader    = 14
	ipTCPHeaders = 20 + 20 + 12
)

// wirePackets counts the packets a wire would have carried for a
// device's counters d (the busier direction's in Rx*): the skb count or
// the full-sized TCP segments the bytes make, the larger (small packets
// are not merged, bulk TCP is). A GRO'd or GSO'd skb holds many
// segments' payloads under one set of headers, each of which carries its
// own on the wire: the skbs' headers are taken off the bytes and the rest
// divided by a segment's payload. Bytes / MTU (ifstats.WirePackets)
// counted payloads of 1448 B as 1500 and 3.5% too few packets, each
// component's cost per packet 3.6% high beside seed 004's cycles over the
// packets sent. IPv6's 20 more header bytes make this 1.4% too few there.
func wirePackets(d ifstats.Counters) float64 {
	if d.MTU <= ipTCPHeaders {
		return d.WirePackets()
	}
	payload := float64(d.RxBytes) - float64(d.RxPackets)*(ethHeader+ipTCPHeaders)
	return max(float64(d.RxPackets), math.Ceil(payload/float64(d.MTU-ipTCPHeaders)))
}

func (r *Recorder) cleanup() {
	if r.perf != nil {
		r.perf.Stop()
		_, _, _ = r.perf.Wait()
		r.perf = nil
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
		r.dir = ""
	}
}
