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
	if err != nil || len(w.Cores) == 0 {
		return ""
	}
	idle := 0.0
	for _, c := range w.Cores {
		idle += c.Idle
	}
	idle /= float64(len(w.Cores))
	if idle >= busyThreshold {
		return ""
	}
	return fmt.Sprintf("the machine was busy before the run: %.0f%% of CPU time idle (below %.0f%%); other processes competed with the emulated nodes, so results are noisier and lower than on a quiet machine", idle, busyThreshold)
}
