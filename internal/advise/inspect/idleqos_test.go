package inspect

import (
	"context"
	"encoding/binary"
	"testing"
)

// The PM QoS limits and haltpoll's poll window are read from a fake
// root: /dev/cpu_dma_latency's raw s32, each online CPU's
// pm_qos_resume_latency_us ("0" none, "n/a" 0 µs) and the haltpoll
// module's guest_halt_poll_ns.
func TestInspectIdleQoS(t *testing.T) {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 1)
	f := map[string]string{
		"dev/cpu_dma_latency":                                        string(b[:]),
		"sys/devices/system/cpu/online":                              "0-2\n",
		"sys/devices/system/cpu/cpuidle/current_driver":              "haltpoll\n",
		"sys/devices/system/cpu/cpuidle/current_governor":            "haltpoll\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state0/name":            "POLL\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state0/latency":         "0\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state1/name":            "haltpoll idle\n",
		"sys/devices/system/cpu/cpu0/cpuidle/state1/latency":         "1\n",
		"sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us": "n/a\n",
		"sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us": "0\n",
		"sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us": "20\n",
		"sys/module/haltpoll/parameters/guest_halt_poll_ns":          "200000\n",
		"sys/devices/system/cpu/cpu0/topology/physical_package_id":   "0\n",
		"sys/devices/system/cpu/cpu1/topology/physical_package_id":   "0\n",
		"sys/devices/system/cpu/cpu2/topology/physical_package_id":   "0\n",
		"sys/devices/system/cpu/cpu0/topology/core_id":               "0\n",
		"sys/devices/system/cpu/cpu1/topology/core_id":               "1\n",
		"sys/devices/system/cpu/cpu2/topology/core_id":               "2\n",
	}
	in := Inspect(context.Background(), Env{Root: tree(t, f)})
	q := in.IdleQoS
	if q == nil || q.GlobalUS == nil || *q.GlobalUS != 1 || len(q.ResumeUS) != 2 || q.ResumeUS[0] != 0 || q.ResumeUS[2] != 20 ||
		q.HaltPollNS == nil || *q.HaltPollNS != 200000 {
		t.Fatalf("idle QoS %+v (unknown %v)", q, in.Unknown)
	}
	if _, ok := q.ResumeUS[1]; ok {
		t.Error("CPU 1's \"0\" (no limit) was taken for a limit")
	}
	// Values the kernel never prints (a negative limit, one past s32, a
	// poll window past u32) are unknown, not limits: inspect read them
	// as numbers, and a negative limit reads as none.
	f["sys/devices/system/cpu/cpu2/power/pm_qos_resume_latency_us"] = "-1\n"
	f["sys/module/haltpoll/parameters/guest_halt_poll_ns"] = "10000000000\n"
	in = Inspect(context.Background(), Env{Root: tree(t, f)})
	if _, ok := in.IdleQoS.ResumeUS[2]; ok || in.Unknown["pm_qos_resume_latency_us"] == "" ||
		in.IdleQoS.HaltPollNS != nil || in.Unknown["guest_halt_poll_ns"] == "" {
		t.Errorf("garbage limits: %+v, unknown %v", in.IdleQoS, in.Unknown)
	}
	// Without the device node (no root, or no CONFIG_CPU_IDLE): unknown,
	// with the reason.
	delete(f, "dev/cpu_dma_latency")
	in = Inspect(context.Background(), Env{Root: tree(t, f)})
	if in.IdleQoS == nil || in.IdleQoS.GlobalUS != nil || in.Unknown["cpu_dma_latency"] == "" {
		t.Errorf("without /dev/cpu_dma_latency: %+v, unknown %v", in.IdleQoS, in.Unknown)
	}
}
