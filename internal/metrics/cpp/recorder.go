package cpp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// packets on the given interfaces. Start and Stop bracket the window;
// Report then computes its costs, and Close drops a window not reported.
type Recorder struct {
	Map *Map
	// Event is what perf samples; the zero value means CPUClock.
	Event Event
	// Ifaces are the devices whose packets are counted (the measured
	// server pods' eth0): packets are full-sized TCP segments of the
	// busier direction (wirePackets), so TCP data (not ACKs) is counted
	// whichever end sends.
	Ifaces []netns.Iface
	// Commands are processes whose samples count beside the map's: the
	// datapath's own that carry every packet (datapath.PacketProcesses,
	// flannel-udp's flanneld), Map.Counting.
	Commands []string

	// segmentOf reads a device's TCP segment size (default readSegment);
	// tests replace it.
	segmentOf func(netns.Iface) (segment, error)
	// flowsOf reads a device's TCP flows (default readFlows); tests
	// replace it.
	flowsOf func(netns.Iface) (flows, error)

	dir           string
	perf          engine.Process
	before, after []ifstats.Counters
	segs          []segment
	// flows and flowsAfter are the devices' TCP flows at the window's
	// start and end (readAllFlows).
	flows, flowsAfter []flows
	stopped           bool // Stop ended the recording; Report has not yet run
	// begun brings the window's start from a perf started with its
	// events off, once it sampled (startControlled); nil otherwise.
	begun chan begun
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
	argv := append(append([]string{"perf", "record", "-a", "-q"}, noBuildIDs...),
		"-e", r.Event.Name, "-c", strconv.Itoa(r.Event.Period), "-o", filepath.Join(dir, "perf.data"))
	if !noControl.Load() {
		// perf first, sampling once it says so, then the counters:
		// samples and packets from one moment on (perfctl.go).
		if err := r.startControlled(ctx, argv); err != nil {
			r.Close()
			return fmt.Errorf("start perf: %w", err)
		}
		return nil
	}
	b := r.readStart()
	if b.err != nil {
		r.Close()
		return b.err
	}
	r.before, r.segs, r.flows = b.before, b.segs, b.flows
	p, err := r.start(ctx, argv)
	if err != nil {
		r.Close()
		return fmt.Errorf("start perf: %w", err)
	}
	r.perf = p
	return nil
}

// start runs a perf command in perfNetns, where cleanup finds it should
// this process be killed; where there is none (a kube node's agent, a
// run measuring the host's devices) it is tied to this process instead
// (proc.StartTied: killed with it), since nothing else would stop a perf
// record -a sampling every CPU.
func (r *Recorder) start(ctx context.Context, argv []string) (engine.Process, error) {
	if ns := r.perfNetns(); ns != "" {
		return proc.Start(ctx, ns, nil, argv)
	}
	return proc.StartTied(ctx, argv)
}

// perfNetns is the namespace perf runs in: the first measured device's,
// when it is a named namespace of this machine (a local run's pod).
// perf record -a samples every CPU from any network namespace, and a
// process inside a run's namespace is found and killed by cleanup after
// the run is killed (kill -9 mid-window), where one in the host's would
// keep sampling and writing. A namespace by path (a kube agent's pods
// are /proc/PID/ns/net) is no run's, and no cleanup looks in it: there
// perf runs in this process's namespace, tied to it (start).
func (r *Recorder) perfNetns() string {
	if len(r.Ifaces) == 0 {
		return ""
	}
	if ns := r.Ifaces[0].Netns; ns != "" && !filepath.IsAbs(ns) && netns.Exists(ns) {
		return ns
	}
	return ""
}

// Stop ends the recording: it reads the counters and ends perf
// (SIGTERM: perf writes its data and exits). It is cheap, so it belongs
// inside every other collector's window; Report, which is not, comes
// after they have all closed. A failed Stop drops the recording.
func (r *Recorder) Stop(context.Context) error {
	if r.perf == nil {
		return errors.New("perf recorder was not started")
	}
	if r.begun != nil {
		b := <-r.begun
		r.begun = nil
		if b.err != nil {
			r.Close()
			return fmt.Errorf("perf record: %w", b.err)
		}
		r.before, r.segs, r.flows = b.before, b.segs, b.flows
		if b.perf != nil {
			r.perf = b.perf // started again without the control options
		}
	}
	var rerr error
	r.after = nil
	for _, ifc := range r.Ifaces {
		c, err := ifstats.Read(ifc)
		rerr = errors.Join(rerr, err)
		r.after = append(r.after, c)
	}
	r.readSegments()
	r.flowsAfter = r.readAllFlows()
	r.perf.Stop()
	_, stderr, werr := r.perf.Wait()
	r.perf = nil
	if rerr == nil {
		if _, err := os.Stat(r.data()); err != nil {
			rerr = fmt.Errorf("perf record wrote no data (%v): %s", werr, clip(string(stderr)))
		}
	}
	if rerr != nil {
		r.Close()
		return rerr
	}
	r.stopped = true
	return nil
}

// Report attributes the samples of the recording Stop ended (perf
// report: seconds at 100% of a core for a busy window) and divides them
// by the packets counted. It removes the recording, whatever it returns.
func (r *Recorder) Report(ctx context.Context) (Result, error) {
	defer r.Close()
	if !r.stopped {
		return Result{}, errors.New("perf recorder: no stopped recording to report")
	}
	prof, err := r.report(ctx)
	if err != nil {
		return Result{}, err
	}
	b := r.Map.Counting(r.Commands...).Attribute(prof, float64(r.Event.Period))
	var wire, skbs, socks float64
	for i := range r.after {
		d := ifstats.Delta(r.before[i], r.after[i])
		tx := d.TxBytes > d.RxBytes
		if tx {
			d.RxBytes, d.RxPackets = d.TxBytes, d.TxPackets
		}
		s := r.flowsAfter[i].segmentsSince(r.flows[i])
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

// report runs perf report on the recording and parses its profile. It
// runs where perf record did: a run killed while perf report reads a
// large recording leaves a process cleanup finds there, or none at all
// (tied to this process, start).
func (r *Recorder) report(ctx context.Context) (*Profile, error) {
	rep, err := r.start(ctx, []string{"perf", "report", "-i", r.data(), "--stdio", "--no-children",
		"--sort", "comm,sym", "-F", "sample,comm,sym", "-t", ";", "-q"})
	if err != nil {
		return nil, fmt.Errorf("perf report: %w", err)
	}
	out, stderr, err := rep.Wait()
	if err != nil {
		return nil, fmt.Errorf("perf report: %w", err)
	}
	p, err := ParseReport(out)
	if err != nil {
		return nil, err
	}
	// perf record -a samples every CPU, idle ones too (swapper), so a
	// window with no sample at all is a recording perf did not finish
	// (killed while writing: "data size field is 0"), whose report says
	// so on stderr and exits 0. Its cost would read 0 per packet.
	if len(p.Samples) == 0 {
		return nil, fmt.Errorf("perf report found no samples in the recording: %s", clip(strings.TrimSpace(string(stderr))))
	}
	return p, nil
}

func (r *Recorder) data() string { return filepath.Join(r.dir, "perf.data") }

// readSegments reads the segment of each measured device that has no
// MSS yet: at Start, after the warm-up, before perf samples, when a
// timed workload's connections are surely open (they may close as the
// window does), and at Stop for a task's, which may connect after Start.
// Their MSS is the segment size (wirePackets); one that cannot be read
// falls back to the path MTU, so its error does not fail the window.
func (r *Recorder) readSegments() { r.readSegmentsInto(r.segs) }

// readSegmentsInto is readSegments into segs, one per measured device.
func (r *Recorder) readSegmentsInto(segs []segment) {
	read := r.segmentOf
	if read == nil {
		read = readSegment
	}
	for i, ifc := range r.Ifaces {
		if segs[i].SndMSS > 0 || segs[i].RcvMSS > 0 {
			continue
		}
		if s, _ := read(ifc); s.SndMSS > 0 || s.RcvMSS > 0 || segs[i].PathMTU == 0 {
			segs[i] = s
		}
	}
}

// readAllFlows reads every measured device's flows; one that cannot be
// read is nil, and its window's socket count 0 (the device's own count
// then stands).
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

// Close ends perf if it still runs and removes the recording: a window
// abandoned (the agent session ends mid-window) or reported.
func (r *Recorder) Close() {
	if r.perf != nil {
		r.perf.Stop()
		_, _, _ = r.perf.Wait()
		r.perf = nil
	}
	if r.begun != nil {
		// perf gone, its start ends at once (an error or EOF on its
		// FIFOs); the channel holds one, so it does not wait for us. A
		// perf started again without the control options goes too.
		if b := <-r.begun; b.perf != nil {
			b.perf.Stop()
			_, _, _ = b.perf.Wait()
		}
		r.begun = nil
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
		r.dir = ""
	}
	r.stopped = false
}
