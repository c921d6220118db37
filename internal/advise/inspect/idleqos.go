package inspect

import (
	"errors"
	"fmt"
	"os"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/cpuset"
)

// IdleQoS is what bounds the idle states a cpuidle governor may pick
// for a CPU (Documentation/admin-guide/pm/cpuidle.rst, "Power Management
// Quality of Service for CPUs": the smaller of the global limit and the
// CPU's own is the upper bound on the exit latency of the states it may
// select), and how long the haltpoll governor polls before it halts
// (Documentation/virt/guest-halt-polling.rst).
type IdleQoS struct {
	// GlobalUS is /dev/cpu_dma_latency's value in µs: the smallest
	// request of the processes that hold it open (tuned's
	// latency-performance profile holds it at 1), 2000000000 where none
	// does. Nil where it could not be read (it needs root).
	GlobalUS *int64 `json:"cpu_dma_latency_us,omitempty"`
	// ResumeUS are the CPUs whose own limit
	// (cpuN/power/pm_qos_resume_latency_us) is set, in µs, "n/a" being
	// 0 (no exit latency at all); a CPU not listed has none ("0").
	ResumeUS map[int]int64 `json:"resume_latency_us,omitempty"`
	// HaltPollNS is the haltpoll governor's guest_halt_poll_ns, the
	// longest a vCPU polls before it halts (0: it halts at once); nil
	// where the governor's module is not there.
	HaltPollNS *int64 `json:"guest_halt_poll_ns,omitempty"`
}

// DefaultDMALatencyUS is /dev/cpu_dma_latency's value with no request.
const DefaultDMALatencyUS = cpuidle.DefaultDMALatencyUS

// idleQoS reads the limits, read-only. Opening /dev/cpu_dma_latency
// registers a request of the default value for as long as it is open
// (Documentation/power/pm_qos_interface.rst: a process holding the node
// open has a request; it is removed on close), which bounds nothing: the
// aggregate is the smallest request. The read returns that aggregate as
// a raw s32 (kernel/power/qos.c, cpu_latency_qos_read; turbostat reads it
// the same way).
func (r reader) idleQoS() {
	q := &IdleQoS{}
	r.in.IdleQoS = q
	if v, err := cpuidle.ReadDMALatency(r.path("dev/cpu_dma_latency")); err != nil {
		r.unknown("cpu_dma_latency", err)
	} else {
		q.GlobalUS = &v
	}
	online, err := cpuset.Parse(r.in.OnlineCPUs)
	if err != nil || len(online) == 0 {
		r.unknown("pm_qos_resume_latency_us", errors.New("online CPUs unknown"))
		online = nil
	}
	for _, c := range online {
		s, err := r.read("sys/" + cpuidle.LimitPath(c))
		switch {
		case errors.Is(err, os.ErrNotExist):
			// No per-CPU limit file: the kernel has none to honour.
		case err != nil:
			r.unknown("pm_qos_resume_latency_us", fmt.Errorf("CPU %d: %w", c, err))
		default:
			// One reading of the kernel's text with env.json's record
			// (cpuidle.ReadLimits): a value it never prints is unknown,
			// not a limit.
			v, set, err := cpuidle.ParseResumeLimit(s)
			if err != nil {
				r.unknown("pm_qos_resume_latency_us", fmt.Errorf("CPU %d: %w", c, err))
			} else if set {
				q.setResume(c, v)
			}
		}
	}
	s, err := r.read("sys/" + cpuidle.HaltPollPath)
	if err == nil {
		var v int64
		if v, err = cpuidle.ParseHaltPoll(s); err == nil {
			q.HaltPollNS = &v
		}
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.unknown("guest_halt_poll_ns", err)
	}
}

func (q *IdleQoS) setResume(cpu int, us int64) {
	if q.ResumeUS == nil {
		q.ResumeUS = map[int]int64{}
	}
	q.ResumeUS[cpu] = us
}
