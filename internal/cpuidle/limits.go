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
		v := int64(-1) // "0": no limit of its own
		switch s {
		case "n/a":
			v = 0
		case "0":
		default:
			// Otherwise the kernel prints a positive s32: its store
			// refuses negatives (drivers/base/power/sysfs.c,
			// pm_qos_resume_latency_us_store). Anything else is no
			// limit it holds, and -1 would record "none".
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil || n <= 0 {
				continue
			}
			v = n
		}
		if l.ResumeUS == nil {
			l.ResumeUS = map[int]int64{}
		}
		l.ResumeUS[c] = v
	}
	// An unsigned int (drivers/cpuidle/governors/haltpoll.c,
	// module_param(guest_halt_poll_ns, uint, 0644)).
	if s, err := read(r, "module/haltpoll/parameters/guest_halt_poll_ns"); err == nil {
		if u, err := strconv.ParseUint(s, 10, 32); err == nil {
			n := int64(u)
			l.HaltPollNS = &n
		}
	}
	return l
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
