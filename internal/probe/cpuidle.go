package probe

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cnibench/cnibench/internal/cpuidle"
	"github.com/cnibench/cnibench/internal/sysfs"
)

// tryCPUIdle checks that CPU 0 has idle states and a PM QoS resume
// latency limit that bounds them, what a cpuIdle tuning sets, and says
// which states. Equivalent to: cat
// /sys/devices/system/cpu/cpuidle/current_driver
// /sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency}
// /sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us
func (*scratch) tryCPUIdle() (bool, string) { return cpuIdleOn(sysfs.Dir("/sys")) }

func cpuIdleOn(r cpuidle.Reader) (bool, string) {
	drv, _ := r.Read(cpuidle.Dir + "/cpuidle/current_driver")
	states, err := cpuidle.States(r, 0)
	switch {
	case errors.Is(err, cpuidle.ErrNone):
		why := "no cpuidle driver"
		if drv = strings.TrimSpace(drv); drv != "" && drv != "none" {
			why = "driver " + drv + " without states"
		}
		return false, fmt.Sprintf("CPU 0 has no idle states to bound (%s: the kernel idles one way only, as with idle=poll or idle=halt)", why)
	case err != nil:
		return false, "reading the idle states failed: " + err.Error()
	}
	if _, err := r.Read(cpuidle.LimitPath(0)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, "CPU 0 has no " + cpuidle.LimitPath(0) + " (kernels before 4.11 do not expose a CPU's PM QoS latency limit)"
		}
		return false, "reading " + cpuidle.LimitPath(0) + " failed: " + err.Error()
	}
	m := cpuidle.Machine(r)
	if m == nil {
		return true, fmt.Sprintf("%d idle states", len(states))
	}
	return true, m.String()
}
