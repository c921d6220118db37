package results

import "testing"

func TestCPUIdleString(t *testing.T) {
	c := CPUIdle{Driver: "haltpoll", Governor: "haltpoll", States: []IdleState{{Name: "POLL"}, {Name: "haltpoll idle", LatencyUS: 1}, {Name: "C6", LatencyUS: 170, Disabled: true}}}
	want := "driver haltpoll, governor haltpoll; states (exit latency): POLL (0 µs), haltpoll idle (1 µs), C6 (170 µs) disabled"
	if got := c.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := (CPUIdle{Driver: "acpi_idle", Governor: "menu"}).String(); got != "driver acpi_idle, governor menu" {
		t.Errorf("without states: %q", got)
	}
}

// Only limits that bound anything are named, the CPUs grouped by their
// own limit; no limits read the same as none recorded.
func TestIdleLimitsString(t *testing.T) {
	one, def, poll := int64(1), int64(2000*1000*1000), int64(200000)
	c := CPUIdle{Driver: "intel_idle", Governor: "menu", Limits: &IdleLimits{GlobalUS: &one, ResumeUS: map[int]int64{0: 0, 1: -1, 2: 0, 3: 20}, HaltPollNS: &poll}}
	want := "driver intel_idle, governor menu; PM QoS: cpu_dma_latency 1 µs, resume latency 0 µs on CPUs 0,2, resume latency 20 µs on CPUs 3, guest_halt_poll_ns 200000"
	if got := c.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	c.Limits = &IdleLimits{GlobalUS: &def, ResumeUS: map[int]int64{0: -1}}
	if got := c.String(); got != "driver intel_idle, governor menu" {
		t.Errorf("no limit in force: %q", got)
	}
}
