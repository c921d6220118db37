package cpp

import (
	"context"
	"errors"
	"fmt"
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

	// segmentOf reads a device's TCP segment size (default readSegment);
	// tests replace it.
	segmentOf func(netns.Iface) (segment, error)
	// flowsOf reads a device's TCP flows (default readFlows); tests
	// replace it.
	flowsOf func(netns.Iface) (flows, error)

	dir    string
	perf   engine.Process
	before []ifstats.Counters
	segs   []segment
	flows  []flows // at the window's start
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
	r.segs = make([]segment, len(r.Ifaces))
	r.readSegments()
	r.flows = r.readAllFlows()
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
	r.readSegments()
	flowsAfter := r.readAllFlows()
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
	var wire, skbs, socks float64
	for i := range after {
		d := ifstats.Delta(r.before[i], after[i])
		tx := d.TxBytes > d.RxBytes
		if tx {
			d.RxBytes, d.RxPackets = d.TxBytes, d.TxPackets
		}
		s := flowsAfter[i].segmentsSince(r.flows[i])
		wire += packetsOf(wirePackets(d, r.segs[i], tx), s)
		skbs += float64(d.RxPackets)
		socks += s
	}
	if wire == 0 {
		return Result{}, errors.New("no packets counted on the measured interfaces during the window")
	}
	m := b.PerPacket(wire, r.Event.Unit)
	m[MetricSKBs] = skbs
	m[MetricSocketSegments] = socks
	return Result{Metrics: m, Breakdown: b, Event: r.Event}, nil
}

// readSegments reads the segment of each measured device that has no
// MSS yet: at Start, after the warm-up, before perf samples, when a
// timed workload's connections are surely open (they may close as the
// window does), and at Stop for a task's, which may connect after Start.
// Their MSS is the segment size (wirePackets); one that cannot be read
// falls back to the path MTU, so its error does not fail the window.
func (r *Recorder) readSegments() {
	read := r.segmentOf
	if read == nil {
		read = readSegment
	}
	for i, ifc := range r.Ifaces {
		if r.segs[i].SndMSS > 0 || r.segs[i].RcvMSS > 0 {
			continue
		}
		if s, _ := read(ifc); s.SndMSS > 0 || s.RcvMSS > 0 || r.segs[i].PathMTU == 0 {
			r.segs[i] = s
		}
	}
}

// readAllFlows reads every measured device's flows; one that cannot be
// read is empty (the device's own count then stands).
func (r *Recorder) readAllFlows() []flows {
	read := r.flowsOf
	if read == nil {
		read = readFlows
	}
	out := make([]flows, len(r.Ifaces))
	for i, ifc := range r.Ifaces {
		out[i], _ = read(ifc)
	}
	return out
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
