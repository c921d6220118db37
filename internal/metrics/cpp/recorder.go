package cpp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/metrics/ifstats"
	"github.com/cnibench/cnibench/internal/workload/proc"
)

// Sample periods: one sample per ms of CPU time with cpu-clock (1 kHz
// per busy CPU), fine enough for components of a few % over a window of
// seconds and small enough in cost (see docs/workloads.md); with cycles,
// 2 M cycles, about a ms at 2 GHz, for the same cost.
const (
	DefaultPeriodNs     = 1_000_000
	DefaultPeriodCycles = 2_000_000
)

// perf event names.
const (
	EventCPUClock = "cpu-clock"
	EventCycles   = "cycles"
)

// HasCycles reports whether this machine counts hardware CPU cycles for
// the whole system, i.e. whether `perf record -a -e cycles` can work: it
// opens the counter on CPU 0 for every process, as perf will, and closes
// it. Most VMs have no PMU and fail here.
func HasCycles() bool {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_HARDWARE,
		Config: unix.PERF_COUNT_HW_CPU_CYCLES,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Bits:   unix.PerfBitDisabled,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// Check reports whether perf can sample the machine.
func Check() error {
	if _, err := exec.LookPath("perf"); err != nil {
		return errors.New("perf is not installed; install it (Debian: apt-get install linux-perf) to measure CPU cost per packet")
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
	// Event is EventCycles or EventCPUClock; empty chooses cycles when
	// HasCycles says the machine has them.
	Event string
	// Period is the sample period in the event's unit (default
	// DefaultPeriodNs or DefaultPeriodCycles).
	Period int
	// Ifaces are the devices whose packets are counted (the measured
	// server pods' eth0): packets are MTU-sized packets of the busier
	// direction, so TCP data (not ACKs) is counted whichever end sends.
	Ifaces []engine.Iface

	dir    string
	perf   engine.Process
	before []ifstats.Counters
}

// Result is a window's CPP metrics and its breakdown.
type Result struct {
	Metrics   map[string]float64 `json:"metrics"`
	Breakdown Breakdown          `json:"breakdown"`
}

// Start reads the counters and starts perf record on every CPU.
func (r *Recorder) Start(ctx context.Context) error {
	if r.Event == "" {
		r.Event = EventCPUClock
		if HasCycles() {
			r.Event = EventCycles
		}
	}
	if r.Period <= 0 {
		r.Period = DefaultPeriodNs
		if r.Event == EventCycles {
			r.Period = DefaultPeriodCycles
		}
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
	argv := []string{"perf", "record", "-a", "-q", "-e", r.Event, "-c", strconv.Itoa(r.Period), "-o", filepath.Join(dir, "perf.data")}
	p, err := proc.Start(ctx, "", nil, argv)
	if err != nil {
		r.cleanup()
		return fmt.Errorf("start perf: %w", err)
	}
	r.perf = p
	return nil
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
	rep, err := proc.Start(ctx, "", nil, []string{"perf", "report", "-i", data, "--stdio", "--no-children",
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
	unit := UnitNs
	if r.Event == EventCycles {
		unit = UnitCycles
	}
	b := r.Map.Attribute(prof, float64(r.Period), unit)
	var wire, skbs float64
	for i := range after {
		d := ifstats.Delta(r.before[i], after[i])
		if d.TxBytes > d.RxBytes {
			d.RxBytes, d.RxPackets = d.TxBytes, d.TxPackets
		}
		wire += d.WirePackets()
		skbs += float64(d.RxPackets)
	}
	if wire == 0 {
		return Result{}, errors.New("no packets counted on the measured interfaces during the window")
	}
	m := b.PerPacket(wire)
	m[MetricSKBs] = skbs
	return Result{Metrics: m, Breakdown: b}, nil
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
