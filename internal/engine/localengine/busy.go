package localengine

import (
	"fmt"
	"time"

	"github.com/cnibench/cnibench/internal/metrics"
)

// busyThreshold is the idle share below which the machine is called busy
// before a run: other work would then compete with the emulated nodes for
// the CPUs and the results would mostly measure that competition.
const busyThreshold = 80.0

// checkIdle samples the machine for a second before the run and returns a
// note when it is busy (empty when not, or when sampling fails).
func checkIdle(procRoot string) string {
	s := metrics.NewSampler(procRoot, time.Second)
	if err := s.Start(); err != nil {
		return ""
	}
	time.Sleep(time.Second)
	w, err := s.Stop()
	if err != nil {
		return ""
	}
	return busyNote(w)
}

// busyNote is checkIdle's note on a second of the machine: its mean idle
// share over the CPUs measured, those online at the second's end (a CPU
// offline then has zeros, which read as 0% idle).
func busyNote(w metrics.Window) string {
	idle, n := 0.0, 0
	for _, c := range w.Online() {
		if c.Measured() {
			idle += c.Idle
			n++
		}
	}
	if n == 0 {
		return ""
	}
	idle /= float64(n)
	if idle >= busyThreshold {
		return ""
	}
	return fmt.Sprintf("the machine was busy before the run: %.0f%% of CPU time idle (below %.0f%%); other processes competed with the emulated nodes, so results are noisier and lower than on a quiet machine", idle, busyThreshold)
}
