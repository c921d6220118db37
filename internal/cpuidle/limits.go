package cpuidle

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/results"
)

// DefaultDMALatencyUS is /dev/cpu_dma_latency's value with no request
// (include/linux/pm_qos.h, PM_QOS_CPU_LATENCY_DEFAULT_VALUE: 2000 s).
const DefaultDMALatencyUS = 2000 * 1000 * 1000

// HaltPollCoversNS is the poll window from which a request/response
// round trip's idle gap ends before a haltpoll vCPU halts: the round
// trips this project's pods made on a KVM guest took 68 µs halting and
// 20 µs polling (median, docs/advise.md), so a vCPU that may poll 100 µs
// has the next request before it halts. cnibench's heuristic, not a
// published number.
const HaltPollCoversNS = 100_000

// ReadDMALatency reads the global CPU latency limit: four bytes, the
// host's byte order (kernel/power/qos.c, cpu_latency_qos_read; turbostat
// reads it the same way). Opening the node registers a request of the
// default value while it is open (Documentation/power/pm_qos_interface.rst),
// which bounds nothing: the aggregate is the smallest request.
func ReadDMALatency(file string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, fmt.Errorf("read %s: %w", file, err)
	}
	return int64(int32(binary.NativeEndian.Uint32(b[:]))), nil
}

// ReadLimits reads the limits of the online CPUs through r, the global
// one from dmaFile ("" where it is not reachable: a cluster node's). What
// cannot be read, or reads as no value the kernel prints, is left unset;
// the record is documentation.
func ReadLimits(r Reader, dmaFile string) *results.IdleLimits {
	l := &results.IdleLimits{}
	var online cpuset.Set
	if s, err := read(r, path.Join(Dir, "online")); err == nil {
		online, _ = cpuset.Parse(s)
	}
	if dmaFile != "" {
		if v, err := ReadDMALatency(dmaFile); err == nil {
			l.GlobalUS = &v
		}
	}
	for _, c := range online {
		s, err := read(r, LimitPath(c))
		if err != nil {
			continue
		}
		v, set, err := ParseResumeLimit(s)
		if err != nil {
			continue
		}
		if !set {
			v = -1 // "0": no limit of its own
		}
		if l.ResumeUS == nil {
			l.ResumeUS = map[int]int64{}
		}
		l.ResumeUS[c] = v
	}
	if s, err := read(r, HaltPollPath); err == nil {
		if n, err := ParseHaltPoll(s); err == nil {
			l.HaltPollNS = &n
		}
	}
	return l
}

// HaltPollPath is the haltpoll governor's poll window under /sys.
const HaltPollPath = "module/haltpoll/parameters/guest_halt_poll_ns"

// ParseResumeLimit reads a CPU's pm_qos_resume_latency_us as the kernel
// prints it: "0" is no limit of its own (set false), "n/a" a limit of 0
// µs (no exit latency at all), otherwise a positive s32: its store refuses
// negatives (drivers/base/power/sysfs.c, pm_qos_resume_latency_us_store).
// Anything else is no value the kernel holds: an error.
func ParseResumeLimit(s string) (us int64, set bool, err error) {
	switch s {
	case "0":
		return 0, false, nil
	case "n/a":
		return 0, true, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n <= 0 {
		return 0, false, fmt.Errorf("%q is not a resume latency limit (0, n/a or a positive 32-bit number of µs)", s)
	}
	return n, true, nil
}

// ParseHaltPoll reads guest_halt_poll_ns, an unsigned int
// (drivers/cpuidle/governors/haltpoll.c, module_param(guest_halt_poll_ns,
// uint, 0644)).
func ParseHaltPoll(s string) (ns int64, err error) {
	u, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a poll window (an unsigned 32-bit number of ns)", s)
	}
	return int64(u), nil
}

// Loosest is the largest of the CPUs' bounds, each the smaller of the
// global limit and the CPU's own: a state within it may be selected on
// some CPU. ok is false when no CPU's limit was read.
func Loosest(l *results.IdleLimits) (us int64, ok bool) {
	if l == nil || len(l.ResumeUS) == 0 {
		return 0, false
	}
	global := int64(DefaultDMALatencyUS)
	if l.GlobalUS != nil {
		global = *l.GlobalUS
	}
	us = -1
	for _, own := range l.ResumeUS {
		b := global
		if own >= 0 {
			b = min(b, own)
		}
		us = max(us, b)
	}
	return us, true
}
