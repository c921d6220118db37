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
